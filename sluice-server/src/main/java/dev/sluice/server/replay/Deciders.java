package dev.sluice.server.replay;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A log decided by several {@link Replayer}s at once, one thread each: the calling thread reads the log and hands each
 * request, in batches, to the part {@link Partitions} names; every part decides its requests in the log's order. At
 * most {@value #AHEAD} batches of {@value ReadAhead#BATCH} requests wait per part, so memory stays flat in the log's
 * length.
 *
 * <p>The first thing that stops the run (the log cannot be read, the bad-line handler throws, a part fails, or a request
 * joins two parts) stops every part and is thrown by {@link #run} once every part's thread has ended; a request that
 * joins two parts is thrown as {@link Joined}, before any part has seen it.
 */
final class Deciders {
    static final int AHEAD = 8;

    /** The last batch of a part. */
    private static final TimedRequest[] END = new TimedRequest[0];

    /** A request whose descriptors name two parts: the run is abandoned. */
    static final class Joined extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Joined(String message) {
            super(message, null, false, false);
        }
    }

    private Deciders() {}

    /** One part's thread, and what stopped it. */
    private static final class Part {
        final BlockingQueue<TimedRequest[]> queue = new ArrayBlockingQueue<>(AHEAD);
        final Thread thread;
        volatile @Nullable Throwable failure;

        Part(Replayer replayer, int index, Runnable onFailure) {
            this.thread = new Thread(() -> decide(replayer, onFailure), "sluice-replay-part-" + index);
            thread.setDaemon(true);
        }

        private void decide(Replayer replayer, Runnable onFailure) {
            boolean failed = false;
            while (true) {
                TimedRequest[] batch;
                try {
                    batch = queue.take();
                } catch (InterruptedException e) {
                    return; // never: the reader always ends a part with END
                }
                if (batch == END) {
                    return;
                }
                if (failed) {
                    continue; // taken and dropped, so that the reader never waits on a stopped part
                }
                try {
                    for (TimedRequest r : batch) {
                        replayer.replay(r);
                    }
                } catch (IOException | RuntimeException | Error e) {
                    failure = e;
                    failed = true;
                    onFailure.run();
                }
            }
        }
    }

    /**
     * Reads {@code log} on the calling thread and decides it on one thread per replayer, updating {@code progress} (if
     * any) every few thousand requests.
     *
     * @throws IOException      if the log could not be read, or a part could not spill
     * @throws Joined           if a request's descriptors name two parts
     * @throws RuntimeException what the bad-line handler or a part threw
     */
    static void run(LogReader log, @Nullable Progress progress, Partitions partitions, List<Replayer> replayers)
            throws IOException {
        int n = replayers.size();
        if (n != partitions.count()) {
            throw new IllegalArgumentException(n + " replayers for " + partitions.count() + " parts");
        }
        AtomicBoolean stop = new AtomicBoolean();
        List<Part> parts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            parts.add(new Part(replayers.get(i), i, () -> stop.set(true)));
        }
        parts.forEach(p -> p.thread.start());
        TimedRequest[][] batches = new TimedRequest[n][ReadAhead.BATCH];
        int[] filled = new int[n];
        Throwable thrown = null;
        try {
            long read = 0;
            for (TimedRequest r; (r = log.next()) != null; ) {
                int p = partitions.of(r);
                if (p < 0) {
                    throw new Joined("line " + r.line() + " joins " + partitions.joined(r)
                            + " in one request, which two threads would decide apart");
                }
                batches[p][filled[p]++] = r;
                if (filled[p] == ReadAhead.BATCH) {
                    put(parts.get(p), batches[p]);
                    batches[p] = new TimedRequest[ReadAhead.BATCH];
                    filled[p] = 0;
                    if (stop.get()) {
                        break;
                    }
                }
                if ((++read & 0xFFF) == 0 && progress != null) {
                    progress.update(log.linesRead(), log.bytesRead());
                }
            }
            for (int p = 0; p < n; p++) {
                if (filled[p] > 0) {
                    put(parts.get(p), Arrays.copyOf(batches[p], filled[p]));
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            thrown = e;
        } finally {
            for (Part part : parts) {
                put(part, END);
            }
            for (Part part : parts) {
                join(part.thread);
            }
        }
        if (thrown == null) {
            for (Part part : parts) {
                if (part.failure != null) {
                    thrown = part.failure;
                    break;
                }
            }
        }
        if (thrown instanceof IOException io) {
            throw io;
        } else if (thrown instanceof RuntimeException re) {
            throw re;
        } else if (thrown instanceof Error error) {
            throw error;
        }
    }

    /** Queues {@code batch} for {@code part}, which always takes it (a part that failed drops what it takes). */
    private static void put(Part part, TimedRequest[] batch) {
        boolean interrupted = false;
        while (true) {
            try {
                part.queue.put(batch);
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private static void join(Thread thread) {
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
