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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Watches a directory of policy files and puts every change in force on a {@link PolicyLimiter}, without restart.
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
 * counted, and leaves the previous one in force until the files change again.
 */
public final class PolicyWatcher implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(PolicyWatcher.class.getName());

    private final PolicyLimiter limiter;
    private final Path directory;
    private final long intervalNanos;
    private final WatchService watchService;
    private final Thread thread;
    /** Confined to the watcher thread after start. */
    private byte[] lastDigest;

    private volatile boolean closed;

    private PolicyWatcher(PolicyLimiter limiter, Path directory, Duration interval) throws IOException {
        this.limiter = limiter;
        this.directory = directory;
        this.intervalNanos = interval.toNanos();
        this.lastDigest = digest(directory);
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
        this.thread = new Thread(this::run, "sluice-policy-watcher " + directory);
        this.thread.setDaemon(true);
    }

    /**
     * Starts watching {@code directory} for {@code limiter}, whose policies are assumed to be the directory's
     * current files; a change after this call is put in force.
     *
     * @param interval the longest time between two checks of the files, however quiet the file system
     * @throws IOException              if the directory cannot be watched or read
     * @throws IllegalArgumentException if {@code interval} is not positive
     */
    public static PolicyWatcher start(PolicyLimiter limiter, Path directory, Duration interval) throws IOException {
        Objects.requireNonNull(limiter, "limiter must not be null");
        Objects.requireNonNull(directory, "directory must not be null");
        Objects.requireNonNull(interval, "interval must not be null");
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive, was " + interval);
        }
        PolicyWatcher w = new PolicyWatcher(limiter, directory, interval);
        w.thread.start();
        return w;
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
                        "watching rate limit policies in " + directory + " failed; " + "trying again in "
                                + Duration.ofNanos(intervalNanos),
                        e);
            }
        }
    }

    /** Reloads if the files differ from the last digest seen. */
    private void checkOnce() {
        byte[] now;
        try {
            now = digest(directory);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot read rate limit policies in " + directory + ": " + e);
            return;
        }
        if (Arrays.equals(now, lastDigest)) {
            return;
        }
        lastDigest = now;
        if (limiter.reload(directory)) {
            LOG.log(
                    System.Logger.Level.INFO,
                    "rate limit policies reloaded from " + directory + ", version " + limiter.version());
        }
    }

    static byte[] digest(Path directory) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
        List<Path> files = new ArrayList<>();
        try (Stream<Path> list = Files.list(directory)) {
            list.filter(Policies::isPolicyFile).sorted().forEach(files::add);
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
            LOG.log(System.Logger.Level.DEBUG, "closing the watch service of " + directory + ": " + e);
        }
        thread.interrupt();
    }

    @Override
    public String toString() {
        return "PolicyWatcher[" + directory + (closed ? ", closed" : "") + "]";
    }
}
