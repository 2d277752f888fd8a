package dev.sluice.spring.boot;

import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.PolicyWatcher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.context.SmartLifecycle;

/**
 * Keeps an application's policies current: watches their location while the application runs (a
 * {@link PolicyWatcher}), and tells what the last load or reload did, for the {@code sluice} Actuator endpoint.
 * Inline policies, or {@code sluice.policies.watch: false}, are loaded once.
 */
public final class SluiceReloads implements SmartLifecycle, AutoCloseable {

    private final PolicyLimiter limiter;
    private final SluicePolicySource source;
    private final boolean watch;
    private final Duration interval;
    private final Reload initial;

    /** The watcher, if the location is watched; kept after stop for its last reload. Guarded by {@code this}. */
    private @Nullable PolicyWatcher watcher;
    /** Guarded by {@code this}. */
    private boolean running;
    /** Whether {@link #stop()} closed the watcher. Guarded by {@code this}. */
    private boolean stopped;

    /**
     * Reloads for {@code limiter}, whose policies were just loaded from {@code source}. The location is watched from
     * now on, so that a change made while the rest of the application starts is not missed.
     *
     * @param watch    whether to watch the source's location, if it has one
     * @param interval the longest time between two checks of the location
     * @throws UncheckedIOException if the location cannot be watched
     */
    public SluiceReloads(PolicyLimiter limiter, SluicePolicySource source, boolean watch, Duration interval) {
        this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
        this.source = Objects.requireNonNull(source, "source must not be null");
        this.watch = watch;
        this.interval = Objects.requireNonNull(interval, "interval must not be null");
        long version = limiter.version();
        this.initial = new Reload(
                Instant.now(),
                source.description(),
                true,
                "version " + version + " in force, loaded at start",
                version);
        Path location = source.location();
        if (watch && location != null) {
            this.watcher = watch(location);
        }
    }

    private PolicyWatcher watch(Path location) {
        try {
            return PolicyWatcher.start(limiter, location, interval);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot watch the rate limit policies in " + location, e);
        }
    }

    /** The source of the policies. */
    public SluicePolicySource source() {
        return source;
    }

    /** Whether the location is being watched. */
    public synchronized boolean watching() {
        return watcher != null && !stopped;
    }

    /** The last reload, or the load at start when nothing has changed since. */
    public synchronized Reload lastReload() {
        PolicyWatcher w = watcher;
        return w == null ? initial : w.lastReload().map(Reload::of).orElse(initial);
    }

    /** After a {@link #stop()}: reloads what changed while stopped, and watches again. */
    @Override
    public synchronized void start() {
        running = true;
        Path location = source.location();
        if (!stopped || location == null || watcher == null) {
            return;
        }
        stopped = false;
        limiter.reload(location);
        watcher = watch(location);
    }

    /** Stops watching; the policies in force stay. */
    @Override
    public synchronized void stop() {
        running = false;
        PolicyWatcher w = watcher;
        if (w != null && !stopped) {
            w.close();
            stopped = true;
        }
    }

    /** Stops watching, for good unless started again; called when the application context closes. */
    @Override
    public void close() {
        stop();
    }

    @Override
    public synchronized boolean isRunning() {
        return running;
    }

    @Override
    public String toString() {
        return "SluiceReloads[" + source.description() + (watch ? ", watched" : "") + "]";
    }

    /**
     * A load or reload of the policies. Immutable.
     *
     * @param time      when
     * @param source    the file or directory read, or {@code sluice.policies.inline}
     * @param succeeded whether its policies are in force
     * @param message   the version put in force, or why the policies were refused (every error with its file, line and
     *                  column) and that the previous version stays
     * @param version   the version in force after it
     */
    public record Reload(Instant time, String source, boolean succeeded, String message, long version) {

        static Reload of(PolicyWatcher.Reload r) {
            return new Reload(r.time(), r.source().toString(), r.succeeded(), r.message(), r.version());
        }
    }
}
