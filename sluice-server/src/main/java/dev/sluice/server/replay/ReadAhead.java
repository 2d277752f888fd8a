package dev.sluice.server.replay;

import java.io.IOException;
import java.util.Arrays;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import org.jspecify.annotations.Nullable;

/**
 * A log read on a thread of its own, its requests handed over in batches: reading and scanning the lines takes one
 * core while the caller decides them on another. The caller gets every request in the order the reader gives it out,
 * so nothing it decides changes; at most {@value #AHEAD} batches of {@value #BATCH} requests wait, so memory stays
 * flat in the log's length.
 *
 * <p>The reader's thread is the only one that touches the {@link LogReader} (and calls its bad-line handler and the
 * progress bar) until {@link #next()} has returned null or thrown, or {@link #close()} has returned: after that the
 * caller may read the reader's counts. What stops the reading (an {@link IOException}, or an exception the bad-line
 * handler throws) is thrown by {@link #next()} on the caller's thread, after the requests read before it.
 */
final class ReadAhead implements AutoCloseable {
    static final int BATCH = 1024;
    static final int AHEAD = 8;

    /** The last batch: the reading is over (done, or stopped by {@link #failure}). */
    private static final TimedRequest[] END = new TimedRequest[0];

    private final BlockingQueue<TimedRequest[]> queue = new ArrayBlockingQueue<>(AHEAD);
    private final Thread thread;
    private volatile @Nullable Throwable failure; // written before END is queued, read after it is taken

    private TimedRequest[] batch = new TimedRequest[0];
    private int at;
    private boolean ended;

    /**
     * Starts reading {@code log}, updating {@code progress} (if any) every few thousand requests.
     */
    ReadAhead(LogReader log, @Nullable Progress progress) {
        this.thread = new Thread(() -> read(log, progress), "sluice-replay-reader");
        thread.setDaemon(true);
        thread.start();
    }

    private void read(LogReader log, @Nullable Progress progress) {
        try {
            TimedRequest[] b = new TimedRequest[BATCH];
            int k = 0;
            long n = 0;
            for (TimedRequest r; (r = log.next()) != null; ) {
                b[k++] = r;
                if (k == BATCH) {
                    queue.put(b);
                    b = new TimedRequest[BATCH];
                    k = 0;
                }
                if ((++n & 0xFFF) == 0 && progress != null) {
                    progress.update(log.linesRead(), log.bytesRead());
                }
            }
            if (k > 0) {
                queue.put(Arrays.copyOf(b, k));
            }
        } catch (InterruptedException e) {
            return; // closed by the caller: nobody takes END
        } catch (IOException | RuntimeException | Error e) {
            failure = e;
        }
        try {
            queue.put(END);
        } catch (InterruptedException e) {
            // closed by the caller
        }
    }

    /**
     * The next request in the reader's order, or null once the log is read.
     *
     * @throws IOException       if the log could not be read
     * @throws RuntimeException  what the bad-line handler threw
     */
    @Nullable
    TimedRequest next() throws IOException {
        if (at == batch.length) {
            if (ended) {
                return null;
            }
            try {
                batch = queue.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while reading the log", e);
            }
            at = 0;
            if (batch == END) {
                ended = true;
                joinReader();
                Throwable t = failure;
                if (t instanceof IOException io) {
                    throw io;
                } else if (t instanceof RuntimeException re) {
                    throw re;
                } else if (t instanceof Error error) {
                    throw error;
                }
                return null;
            }
        }
        return batch[at++];
    }

    /**
     * Stops the reader if it is still reading. A reader blocked on a stream that does not answer interrupts (standard
     * input) is left to end with the process: its thread is a daemon, and what it reads is no longer taken.
     */
    @Override
    public void close() {
        if (!ended) {
            thread.interrupt();
            queue.clear();
            try {
                thread.join(1000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits for the reader's thread, which has queued {@link #END} and has nothing left to do. */
    private void joinReader() {
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
