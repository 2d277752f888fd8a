package dev.sluice.bench;

import dev.sluice.RateLimiter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * A fixed-duration load on a store's limiter, for comparing two builds side by side: {@code threads} callers deciding
 * admissions on their keys in turn, a warm-up of 3 s, then {@code seconds} measured, with the CPU the store's server
 * spent over exactly that span (from {@code /proc}: the server must run on this machine). Every decision must be
 * allowed, unless the load is one of refusals ({@link #run(RateLimiter, String[], int, int, LongSupplier, boolean)}):
 * a refusal otherwise means the limit was set too low for the load, and stops the run.
 */
public final class FixedLoad {

    private FixedLoad() {}

    /**
     * A load command's arguments: the store's address, the name of what it writes (a table, a collection, a key
     * prefix), callers, keys, seconds, and the server's process id when there is one (else 0).
     */
    public record Args(String url, String name, int threads, int keys, int seconds, long server) {

        /** Reads {@code url name threads keys seconds [server-pid]}. */
        public static Args parse(String[] args) {
            return new Args(
                    args[0],
                    args[1],
                    Integer.parseInt(args[2]),
                    Integer.parseInt(args[3]),
                    Integer.parseInt(args[4]),
                    args.length > 5 ? Long.parseLong(args[5]) : 0);
        }
    }

    /** What a run measured: decisions per second, and the server's CPU time per decision in microseconds. */
    public record Result(double perSecond, double serverCpuMicros) {}

    /**
     * Runs the load.
     *
     * @param names       the keys, asked in turn by each caller from its own starting point
     * @param serverTicks the server's CPU time so far, in clock ticks ({@link #ticks})
     */
    public static Result run(RateLimiter limiter, String[] names, int threads, int seconds, LongSupplier serverTicks)
            throws InterruptedException {
        return run(limiter, names, threads, seconds, serverTicks, false);
    }

    /**
     * Runs the load; {@code refusals} true lets decisions be refused (a hot key over its limit), which then count as
     * decisions like the allowed ones.
     *
     * @param serverTicks read exactly twice, at the start and at the end of the measured span
     */
    public static Result run(
            RateLimiter limiter, String[] names, int threads, int seconds, LongSupplier serverTicks, boolean refusals)
            throws InterruptedException {
        int keys = names.length;
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean running = new AtomicBoolean(true);
        LongAdder decisions = new LongAdder();
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int first = t;
            Thread caller = new Thread(() -> {
                int i = first % keys;
                while (running.get()) {
                    if (!limiter.tryAcquire(names[i]).allowed() && !refusals) {
                        throw new IllegalStateException("a decision was refused: the load must never be");
                    }
                    if (measuring.get()) {
                        decisions.increment();
                    }
                    i = i + 1 == keys ? 0 : i + 1;
                }
            });
            caller.start();
            callers.add(caller);
        }
        Thread.sleep(3000); // warm-up
        long cpu0 = serverTicks.getAsLong();
        long t0 = System.nanoTime();
        measuring.set(true);
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        long t1 = System.nanoTime();
        long cpu1 = serverTicks.getAsLong();
        long n = decisions.sum();
        running.set(false);
        for (Thread c : callers) {
            c.join();
        }
        return new Result(n / ((t1 - t0) / 1e9), (cpu1 - cpu0) * (1_000_000.0 / 100) / n); // USER_HZ = 100
    }

    /** utime + stime of process {@code pid}, in clock ticks; 0 for a process that has exited. */
    public static long ticks(long pid) {
        String stat;
        try {
            stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        } catch (NoSuchFileException exited) {
            return 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
    }
}
