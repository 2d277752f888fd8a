package dev.sluice.policy;

import java.io.IOException;
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
import java.util.stream.Stream;
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
 * report no event for it.
 *
 * <p>A reload is {@link PolicyLimiter#reload(Path)}: whole and atomic; a configuration that does not load is logged,
 * counted, and leaves the previous one in force until the files change again. {@link #lastReload()} tells what the
 * last attempt did, for an admin page.
 *
 * <p>A single file is watched through its directory: an event on any file there wakes the watcher, and only a change
 * of the file's own content reloads.
 */
public final class PolicyWatcher implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(PolicyWatcher.class.getName());

    private final PolicyLimiter limiter;
    /** What is loaded: a directory, or one file. */
    private final Path path;
    /** The directory watched: {@code path}, or the file's directory. */
    private final Path directory;

    private final long intervalNanos;
    private final WatchService watchService;
    private final Thread thread;
    /** Confined to the watcher thread after start. */
    private byte[] lastDigest;

    private volatile boolean closed;
    private volatile @Nullable Reload lastReload;

    private PolicyWatcher(PolicyLimiter limiter, Path path, Duration interval) throws IOException {
        this.limiter = limiter;
        this.path = path;
        this.directory = watchedDirectory(path);
        this.intervalNanos = interval.toNanos();
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
     * Starts watching {@code path}, a directory of policy files or one file ({@link Policies#load(Path)}), for
     * {@code limiter}, whose policies are assumed to be the ones {@code path} holds now; a change after this call is
     * put in force.
     *
     * @param interval the longest time between two checks of the files, however quiet the file system
     * @throws IOException              if the directory (or the file's directory) cannot be watched or read
     * @throws IllegalArgumentException if {@code interval} is not positive
     */
    public static PolicyWatcher start(PolicyLimiter limiter, Path path, Duration interval) throws IOException {
        Objects.requireNonNull(limiter, "limiter must not be null");
        Objects.requireNonNull(path, "path must not be null");
        Objects.requireNonNull(interval, "interval must not be null");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive, was " + interval);
        }
        PolicyWatcher w = new PolicyWatcher(limiter, path, interval);
        w.thread.start();
        return w;
    }

    /**
     * What the last reload did: empty until the files first change after {@link #start}. A change that cannot be read
     * or does not load is a failed reload, with the reason.
     */
    public Optional<Reload> lastReload() {
        return Optional.ofNullable(lastReload);
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
                return;
            } catch (RuntimeException e) {
                LOG.log(
                        System.Logger.Level.WARNING,
                        "watching rate limit policies in " + path + " failed; " + "trying again in "
                                + Duration.ofNanos(intervalNanos),
                        e);
            }
        }
    }

    /** Reloads if the files differ from the last digest seen. */
    private void checkOnce() {
        byte[] now;
        try {
            now = digest(path);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot read rate limit policies in " + path + ": " + e);
            lastReload = new Reload(Instant.now(), path, false, "cannot read: " + e, limiter.version());
            return;
        }
        if (Arrays.equals(now, lastDigest)) {
            return;
        }
        lastDigest = now;
        PolicyException refused = limiter.reloadOrError(path);
        long version = limiter.version();
        if (refused == null) {
            LOG.log(System.Logger.Level.INFO, "rate limit policies reloaded from " + path + ", version " + version);
            lastReload = new Reload(Instant.now(), path, true, "version " + version + " in force", version);
        } else {
            lastReload = new Reload(
                    Instant.now(),
                    path,
                    false,
                    "refused, version " + version + " stays in force: " + refused.getMessage(),
                    version);
        }
    }

    /** A digest of the policy files of a directory, or of one file, by name and content. */
    static byte[] digest(Path path) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
        List<Path> files = new ArrayList<>();
        if (Files.isDirectory(path)) {
            try (Stream<Path> list = Files.list(path)) {
                list.filter(Policies::isPolicyFile).sorted().forEach(files::add);
            }
        } else {
            files.add(path);
        }
        for (Path f : files) {
            md.update(f.getFileName().toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            md.update((byte) 0);
            md.update(Files.readAllBytes(f));
            md.update((byte) 0);
        }
        return md.digest();
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
        return "PolicyWatcher[" + path + (closed ? ", closed" : "") + "]";
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
