package dev.sluice.policy;

import dev.sluice.spi.Durations;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Watches a directory of policy files, or one file, and puts every change in force on a {@link PolicyLimiter}, without
 * restart.
 *
 * <pre>{@code
 * PolicyLimiter limiter = PolicyLimiter.builder(Policies.load(dir)).store(store).build();
 * PolicyWatcher watcher = PolicyWatcher.start(limiter, dir, Duration.ofSeconds(10));
 * }</pre>
 *
 * <p>Two signals, one decision. A {@link WatchService} on the directory wakes the watcher as soon as a file is
 * written, created, deleted or renamed; in any case it wakes every {@code interval}. Each time it reads the policy
 * files (following symbolic links) and compares a digest of their names and contents with the last one it saw; only
 * a different digest reloads. The periodic check is what sees a Kubernetes ConfigMap update: the kubelet swaps the
 * {@code ..data} symbolic link, which changes the files' contents without a write to them, and some file systems
 * report no event for it. A single file is watched the same way, through its directory: an event on any file there
 * wakes the watcher, and only a change of the file's own content (or of what its link leads to) reloads.
 *
 * <p>A reload is whole and atomic ({@link PolicyLimiter#update}). What is refused leaves the configuration in force
 * as it is, and is logged (WARNING, once per change, with every error's file, line and column) and counted
 * ({@code sluice.policy.config.loads{result=failure}}):
 * <ul>
 *   <li>a configuration that does not load ({@link Policies#load}): bad YAML, a bad field, a file over
 *       {@link Policies#MAX_FILE_BYTES} or nested deeper than {@link Policies#MAX_DEPTH}, a link that leads nowhere
 *       (a ConfigMap update half done), a file that cannot be read, the path itself gone;
 *   <li>a configuration that would remove a domain in force (its file deleted, a directory emptied, its
 *       {@code domain} renamed): its limits would silently vanish; refused unless
 *       {@link Builder#allowDomainRemoval(boolean) domain removal is allowed};
 *   <li>anything else that goes wrong, an {@link Error} of the JVM included: the watcher catches it and goes on.
 * </ul>
 * The files are tried again at their next change. {@link #lastReload()} tells what the last attempt did, for a health
 * check or an admin page.
 *
 * <p>Thread-safe. The watcher's thread is a daemon; {@link #close()} stops it.
 */
public final class PolicyWatcher implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(PolicyWatcher.class.getName());

    private final PolicyLimiter limiter;
    /** What is loaded: a directory, or one file. */
    private final Path path;

    private final long intervalNanos;
    private final boolean allowDomainRemoval;
    private final Function<Path, Policies> loader;
    private final WatchService watchService;
    private final Thread thread;
    /** Held while the files are read and loaded: by the watcher's thread, or by a caller of {@link #reloadNow()}. */
    private final Object lock = new Object();
    /** Guarded by {@code lock}. */
    private byte[] lastDigest;
    /** The last failure of the watch itself that was logged, so that a failure repeated each round is logged once. */
    private @Nullable String lastLogged;

    private volatile boolean closed;
    private volatile @Nullable Reload lastReload;

    private PolicyWatcher(Builder b) throws IOException {
        this.limiter = b.limiter;
        this.path = b.path;
        this.intervalNanos = b.interval.toNanos();
        this.allowDomainRemoval = b.allowDomainRemoval;
        this.loader = b.loader;
        Path directory = watchedDirectory(path);
        this.lastDigest = digest(path);
        WatchService ws = directory.getFileSystem().newWatchService();
        try {
            directory.register(
                    ws,
                    StandardWatchEventKinds.ENTRY_CREATE,
                    StandardWatchEventKinds.ENTRY_MODIFY,
                    StandardWatchEventKinds.ENTRY_DELETE);
        } catch (IOException | RuntimeException e) {
            ws.close();
            throw e;
        }
        this.watchService = ws;
        this.thread = new Thread(this::run, "sluice-policy-watcher " + path);
        this.thread.setDaemon(true);
    }

    /**
     * Starts watching {@code path} with the defaults of {@link #builder} and {@code interval}.
     *
     * @throws IOException              if the directory (or the file's directory) cannot be watched
     * @throws IllegalArgumentException if {@code interval} is not positive
     */
    public static PolicyWatcher start(PolicyLimiter limiter, Path path, Duration interval) throws IOException {
        return builder(limiter, path).interval(interval).start();
    }

    /**
     * A watcher of {@code path}, a directory of policy files or one file ({@link Policies#load(Path)}), for
     * {@code limiter}, whose policies are assumed to be the ones {@code path} holds when the watcher starts.
     */
    public static Builder builder(PolicyLimiter limiter, Path path) {
        return new Builder(limiter, path);
    }

    /**
     * What the last reload did: empty until the files first change after the start. A change that cannot be read,
     * does not load or is refused is a failed reload, with the reason; a failed reload is the last one until the
     * files change again.
     */
    public Optional<Reload> lastReload() {
        return Optional.ofNullable(lastReload);
    }

    /**
     * Loads the files now, whether or not they changed, under the same rules as a change: what is refused leaves the
     * configuration in force. For an admin's "reload" request.
     *
     * @return what it did, as {@link #lastReload()} will tell it
     */
    public Reload reloadNow() {
        synchronized (lock) {
            lastDigest = digest(path);
            return attempt();
        }
    }

    private static Path watchedDirectory(Path path) {
        if (Files.isDirectory(path)) {
            return path;
        }
        Path parent = path.toAbsolutePath().getParent();
        if (parent == null) {
            throw new IllegalArgumentException("a policy file must be in a directory, was " + path);
        }
        return parent;
    }

    private void run() {
        while (!closed) {
            try {
                WatchKey key = watchService.poll(intervalNanos, TimeUnit.NANOSECONDS);
                if (key != null) {
                    key.pollEvents();
                    key.reset();
                }
                checkOnce();
            } catch (InterruptedException | ClosedWatchServiceException e) {
                // close() interrupts and closes; anything else that interrupts is not a reason to stop
            } catch (Throwable e) { // an Error of the JVM included: the watcher must outlive anything
                try {
                    String what = "watching rate limit policies in " + path + " failed; trying again in "
                            + Durations.format(Duration.ofNanos(intervalNanos));
                    if (!what.concat(e.toString()).equals(lastLogged)) {
                        lastLogged = what.concat(e.toString());
                        LOG.log(System.Logger.Level.WARNING, what, e);
                    }
                } catch (Throwable ignored) { // logging itself failed (out of memory): the next round tries again
                }
            }
        }
    }

    /** Reloads if the files differ from the last digest seen. */
    private void checkOnce() {
        synchronized (lock) {
            byte[] now = digest(path);
            if (Arrays.equals(now, lastDigest)) {
                return;
            }
            lastDigest = now;
            attempt();
        }
    }

    /** Loads the files and puts them in force, or records why not; never throws. Called under {@code lock}. */
    private Reload attempt() {
        Reload r;
        try {
            Policies next = loader.apply(path);
            if (!allowDomainRemoval) {
                refuseRemoval(limiter.policies(), next);
            }
            limiter.update(next);
            long version = limiter.version();
            LOG.log(System.Logger.Level.INFO, "rate limit policies reloaded from " + path + ", version " + version);
            if (next.domains().isEmpty()) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "rate limit policies in " + path + " define no domain: every request is allowed");
            }
            r = new Reload(Instant.now(), path, true, "version " + version + " in force", version);
        } catch (PolicyException e) {
            long version = limiter.version();
            LOG.log(
                    System.Logger.Level.WARNING,
                    "rate limit policies in " + path + " refused, version " + version + " stays in force: "
                            + e.getMessage());
            limiter.loadFailed();
            r = new Reload(
                    Instant.now(),
                    path,
                    false,
                    "refused, version " + version + " stays in force: " + e.getMessage(),
                    version);
        } catch (Throwable e) { // a bug, or the JVM's own trouble (out of memory, a stack overflow): refused too
            long version = limiter.version();
            LOG.log(
                    System.Logger.Level.WARNING,
                    "rate limit policies in " + path + " could not be loaded, version " + version + " stays in force",
                    e);
            limiter.loadFailed();
            r = new Reload(
                    Instant.now(),
                    path,
                    false,
                    "refused, version " + version + " stays in force: cannot load: " + e,
                    version);
        }
        lastReload = r;
        return r;
    }

    /** @throws PolicyException naming each domain of {@code inForce} that {@code next} does not define */
    private static void refuseRemoval(Policies inForce, Policies next) {
        List<PolicyError> errors = new ArrayList<>();
        for (String domain : inForce.domains()) {
            DomainPolicy p = inForce.domainPolicy(domain);
            if (p != null && !next.domains().contains(domain)) {
                errors.add(new PolicyError(
                        p.file(),
                        0,
                        0,
                        "domain",
                        "domain '" + domain + "' is in force but in no file now (its file deleted or emptied, or the "
                                + "domain renamed): a reload that removes a domain is refused unless domain removal "
                                + "is allowed"));
            }
        }
        if (!errors.isEmpty()) {
            throw new PolicyException(errors);
        }
    }

    /**
     * A digest of the policy files of a directory, or of one file: their names and contents, and for what cannot be
     * read, why (so that a file that disappears, dangles or cannot be read is a change, and is loaded to be refused
     * with its reason). A file over {@link Policies#MAX_FILE_BYTES} is digested by size and time, not read.
     */
    static byte[] digest(Path path) {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
        List<Path> files;
        if (Files.isDirectory(path)) {
            try {
                files = Policies.files(path);
            } catch (IOException e) {
                update(md, "cannot list: " + e);
                return md.digest();
            }
        } else {
            files = List.of(path);
        }
        for (Path f : files) {
            update(md, f.getFileName().toString());
            try {
                if (Policies.dangling(f)) {
                    update(md, "a link to nothing: " + Files.readSymbolicLink(f));
                } else if (!Files.isRegularFile(f)) {
                    update(md, Files.exists(f) ? "not a regular file" : "no such file");
                } else {
                    long size = Files.size(f);
                    if (size > Policies.MAX_FILE_BYTES) {
                        update(md, "too large: " + size + " bytes, " + Files.getLastModifiedTime(f));
                    } else {
                        md.update(Policies.readAtMost(f, Policies.MAX_FILE_BYTES + 1));
                        md.update((byte) 0);
                    }
                }
            } catch (IOException e) {
                update(md, "cannot read: " + e);
            }
        }
        return md.digest();
    }

    private static void update(MessageDigest md, String text) {
        md.update(text.getBytes(StandardCharsets.UTF_8));
        md.update((byte) 0);
    }

    /** Stops watching; the limiter keeps the policies in force. Idempotent. */
    @Override
    public void close() {
        closed = true;
        try {
            watchService.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing the watch service of " + path + ": " + e);
        }
        thread.interrupt();
    }

    @Override
    public String toString() {
        return "PolicyWatcher[" + path + (allowDomainRemoval ? ", domain removal allowed" : "")
                + (closed ? ", closed" : "") + "]";
    }

    /** Builds and starts a {@link PolicyWatcher}. Not thread-safe. */
    public static final class Builder {
        private final PolicyLimiter limiter;
        private final Path path;
        private Duration interval = Duration.ofSeconds(10);
        private boolean allowDomainRemoval;
        private Function<Path, Policies> loader = Policies::load;

        private Builder(PolicyLimiter limiter, Path path) {
            this.limiter = Objects.requireNonNull(limiter, "limiter must not be null");
            this.path = Objects.requireNonNull(path, "path must not be null");
        }

        /**
         * The longest time between two checks of the files, however quiet the file system; default 10 s.
         *
         * @throws IllegalArgumentException if {@code interval} is not positive
         */
        public Builder interval(Duration interval) {
            Objects.requireNonNull(interval, "interval must not be null");
            if (interval.isNegative() || interval.isZero()) {
                throw new IllegalArgumentException("interval must be positive, was " + Durations.format(interval));
            }
            this.interval = interval;
            return this;
        }

        /**
         * Whether a change that removes a domain in force is put in force (default false: refused, the domain's
         * limits stay). A domain goes when its file is deleted, the directory emptied or its {@code domain} renamed;
         * refusing that by default keeps a half-done deployment from silently lifting limits. A link that leads
         * nowhere is refused either way: remove the link to remove its domain.
         */
        public Builder allowDomainRemoval(boolean allow) {
            this.allowDomainRemoval = allow;
            return this;
        }

        /** How the files are loaded; {@link Policies#load} but in tests that need a loader that fails. */
        Builder loader(Function<Path, Policies> loader) {
            this.loader = Objects.requireNonNull(loader, "loader must not be null");
            return this;
        }

        /**
         * Starts watching: a change after this call is put in force.
         *
         * @throws IOException if the directory (or the file's directory) cannot be watched
         */
        public PolicyWatcher start() throws IOException {
            PolicyWatcher w = new PolicyWatcher(this);
            w.thread.start();
            return w;
        }
    }

    /**
     * One reload attempt of a {@link PolicyWatcher}. Immutable.
     *
     * @param time      when it was made
     * @param source    the directory or file loaded
     * @param succeeded whether the new configuration is in force
     * @param message   {@code version 3 in force}; or why it was refused (every error with its file, line and column)
     *                  and that the previous version stays
     * @param version   the version in force after it ({@link PolicyLimiter#version()})
     */
    public record Reload(Instant time, Path source, boolean succeeded, String message, long version) {

        /** Checks the arguments. */
        public Reload {
            Objects.requireNonNull(time, "time must not be null");
            Objects.requireNonNull(source, "source must not be null");
            Objects.requireNonNull(message, "message must not be null");
        }
    }
}
