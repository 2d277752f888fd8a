package dev.sluice.redis;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.RateLimiter;
import dev.sluice.RateLimiterBuilder;
import dev.sluice.lease.LeasedStore;
import dev.sluice.spi.CounterKey;
import dev.sluice.testkit.Await;
import io.lettuce.core.RedisClient;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A service instance in leased mode, run by {@link RedisLeasedAdmissionsTest} in a JVM of its own: on one leased store
 * on Redis (a round every {@code interval}), one limiter per frame algorithm, each of {@code limit} per
 * {@code window} on a key of its own; warms up ({@link #WARM_UP_WINDOWS}, on keys of its own), says it is ready, reads from the go file the wall-clock times to start and stop
 * at, and floods every key from {@code threads} threads each, from start to stop. Every decision is written at once
 * to the algorithm's log, {@code <dir>/<algorithm>-<name>}, as the time its thread read last from the limiter's clock
 * (the time the request was decided at, as an observer outside the limiter sees it), in nanoseconds since the epoch,
 * 19 digits, then {@code a} (admitted) or {@code r} (refused) and a newline, one write each: a process killed with
 * {@code SIGKILL} loses no admission it made. At stop it
 * prints {@code done calls=<store calls> rounds=<rounds> spans=<spans granted> admitted=<n> refused=<n> failed=<n> first=<first store
 * failure>} (the counts since it was ready) and exits without closing anything.
 *
 * <p>Arguments: the Redis URI, a key prefix, the limit, the window and the interval in milliseconds, the threads per
 * key, this instance's name, the log directory; optionally the sub-window counter's sub-windows (10) and a pause in
 * milliseconds (0): with a pause, each thread pauses that long between requests in every other window from the start
 * (the first, the third, ...), sparse traffic, and floods the windows between; then the file to create when ready,
 * and the go file.
 */
public final class LeasedAdmissionLog {

    /** The algorithms run, each on key {@code <prefix>:<algorithm>}. */
    static final List<Algorithm> ALGORITHMS =
            List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_TAIL, Algorithm.SLIDING_WINDOW_COUNTER);

    /**
     * Between two requests of a thread: a flood, a thousand a second per thread, six thousand a second per key over
     * the three processes (30 times the kill run's limit, 6 times the span run's), not a spin; and not so many that
     * the processes' threads saturate the test machine's two cores, where a process that waits for the CPU holds its
     * slices unused (docs/leased-mode.md, Known limits): at five thousand a second per thread the first windows of most
     * runs had such a stall.
     */
    static final long PAUSE_NANOS = 1_000_000;

    /**
     * How many windows each process runs its threads on keys of its own before it says it is ready, sparse and
     * flooding in turn as the run does. Without it the run's first seconds are the JIT compilers' too, three JVMs
     * compiling on the test machine's two cores, and a thread that waits for the CPU decides nothing meanwhile.
     */
    private static final int WARM_UP_WINDOWS = 4;

    private LeasedAdmissionLog() {}

    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String prefix = args[1];
        long limit = Long.parseLong(args[2]);
        Duration window = Duration.ofMillis(Long.parseLong(args[3]));
        Duration interval = Duration.ofMillis(Long.parseLong(args[4]));
        int threads = Integer.parseInt(args[5]);
        String name = args[6];
        Path dir = Path.of(args[7]);
        int subWindows = args.length > 10 ? Integer.parseInt(args[8]) : 10;
        long sparseNanos = args.length > 11 ? Long.parseLong(args[9]) * 1_000_000 : 0;
        Path ready = Path.of(args[args.length - 2]);
        Path go = Path.of(args[args.length - 1]);
        long windowNanos = window.toNanos();

        RedisClient client = RedisClient.create(uri);
        client.setOptions(RedisStore.recommendedClientOptions());
        RedisCounterStore counters =
                RedisStore.counterStoreBuilder(client).timeout(Servers.PATIENCE).build();
        Await.succeeds( // connected, so that no request meets a store that is not yet
                "a read answered by Redis",
                Await.GENEROUS,
                () -> counters.load(List.of(new CounterKey("probe", prefix))));
        AtomicReference<Throwable> firstFailure = new AtomicReference<>();
        LeasedStore leased = LeasedStore.builder(counters)
                .interval(interval)
                .failureListener(e -> firstFailure.compareAndSet(null, e))
                .build();
        RecordingClock clock = new RecordingClock();
        List<Thread> flood = new ArrayList<>();
        List<Thread> warmUp = new ArrayList<>();
        long[] times = new long[2];
        long warmUpFrom = wallNanos();
        long warmUpTo = warmUpFrom + WARM_UP_WINDOWS * windowNanos;
        AtomicLongArray outcomes = new AtomicLongArray(3);
        for (Algorithm algorithm : ALGORITHMS) {
            RateLimiterBuilder b =
                    RateLimiter.builder(algorithm).limit(limit, window).clock(clock);
            if (algorithm == Algorithm.SLIDING_WINDOW_COUNTER) {
                b.buckets(subWindows);
            }
            RateLimiter limiter = b.store(leased).build();
            String key = prefix + ":" + algorithm;
            limiter.peek(key, 1); // connects and reads, so the flood does not wait for either
            FileOutputStream log =
                    new FileOutputStream(dir.resolve(algorithm + "-" + name).toFile(), true);
            for (int t = 0; t < threads; t++) {
                warmUp.add(new Thread(
                        () -> ask(limiter, key + ":warm-up", warmUpFrom, warmUpTo, windowNanos, sparseNanos, d -> {})));
                flood.add(new Thread(() -> ask(limiter, key, times[0], times[1], windowNanos, sparseNanos, d -> {
                    write(log, clock.lastRead(), d.allowed());
                    outcomes.incrementAndGet(d.failed() ? 2 : d.allowed() ? 0 : 1);
                })));
            }
        }
        for (Thread t : warmUp) {
            t.start();
        }
        for (Thread t : warmUp) {
            t.join();
        }
        long calls = leased.stats().storeCalls();
        long rounds = leased.stats().rounds();
        long spans = leased.stats().spans();
        Files.createFile(ready);
        while (!Files.exists(go) || Files.size(go) == 0) {
            LockSupport.parkNanos(1_000_000);
        }
        String[] at = Files.readString(go).trim().split(" ");
        times[0] = Long.parseLong(at[0]);
        times[1] = Long.parseLong(at[1]);
        for (Thread t : flood) {
            t.start();
        }
        for (Thread t : flood) {
            t.join();
        }
        System.out.println("done calls=" + (leased.stats().storeCalls() - calls) + " rounds="
                + (leased.stats().rounds() - rounds) + " spans="
                + (leased.stats().spans() - spans) + " admitted="
                + outcomes.get(0)
                + " refused=" + outcomes.get(1) + " failed="
                + outcomes.get(2) + " first="
                + String.valueOf(firstFailure.get()).replace(' ', '_'));
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }

    /**
     * Asks {@code limiter} for {@code key} from {@code from} to {@code to} (wall clock), handing each decision to
     * {@code decided}: every {@link #PAUSE_NANOS}, or, with a sparse pause, every {@code sparseNanos} in every other
     * window from {@code from} (the first, the third, ...).
     */
    private static void ask(
            RateLimiter limiter,
            String key,
            long from,
            long to,
            long windowNanos,
            long sparseNanos,
            Consumer<Decision> decided) {
        LockSupport.parkNanos(Math.max(0, from - wallNanos()));
        while (wallNanos() < to) {
            decided.accept(limiter.tryAcquire(key));
            boolean sparse = sparseNanos > 0 && Math.floorDiv(wallNanos() - from, windowNanos) % 2 == 0;
            LockSupport.parkNanos(sparse ? sparseNanos : PAUSE_NANOS);
        }
    }

    private static void write(FileOutputStream log, long nanos, boolean allowed) {
        try {
            log.write(String.format("%019d%c%n", nanos, allowed ? 'a' : 'r').getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static long wallNanos() {
        Instant i = Instant.now();
        return i.getEpochSecond() * 1_000_000_000L + i.getNano();
    }

    /** The wall clock, remembering per thread the last time it gave. */
    static final class RecordingClock extends Clock {
        private final ThreadLocal<long[]> last = ThreadLocal.withInitial(() -> new long[1]);

        @Override
        public Instant instant() {
            Instant i = Instant.now();
            last.get()[0] = i.getEpochSecond() * 1_000_000_000L + i.getNano();
            return i;
        }

        long lastRead() {
            return last.get()[0];
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException("UTC only");
        }
    }
}
