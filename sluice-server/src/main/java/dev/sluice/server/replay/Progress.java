package dev.sluice.server.replay;

import dev.sluice.spi.Durations;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * A progress bar on the error stream while a log is read: lines read, lines per second and, for a file, the share
 * read and the time left. Redrawn in place ({@code \r}) a few times a second by a daemon thread, and erased when
 * closed, so that only the result is left on the terminal. Drawn only when asked: the command asks when standard error
 * is a terminal ({@link #stderrIsTerminal()}).
 */
final class Progress implements AutoCloseable {
    private static final long PERIOD_MILLIS = 200;
    private static final int BAR = 30;

    private final PrintStream err;
    private final long size;
    private final long start = System.nanoTime();
    private final Thread thread;
    private volatile long lines;
    private volatile long bytes;
    private volatile boolean done;
    private int drawn;

    private Progress(PrintStream err, long size) {
        this.err = err;
        this.size = size;
        this.thread = new Thread(this::loop, "sluice-replay-progress");
        thread.setDaemon(true);
    }

    /** Starts drawing on {@code err}; {@code size} is the log's size in bytes, or -1 if not known. */
    static Progress start(PrintStream err, long size) {
        Progress p = new Progress(err, size);
        p.thread.start();
        return p;
    }

    /** How far the reading is. */
    void update(long linesRead, long bytesRead) {
        this.lines = linesRead;
        this.bytes = bytesRead;
    }

    private void loop() {
        while (!done) {
            draw();
            try {
                Thread.sleep(PERIOD_MILLIS); // a display's pace, not a wait for a condition
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized void draw() {
        if (done) {
            return;
        }
        double seconds = Math.max(1e-3, (System.nanoTime() - start) / 1e9);
        long l = lines;
        long b = bytes;
        StringBuilder s = new StringBuilder("\rreplay ");
        if (size > 0) {
            double share = Math.min(1, (double) b / size);
            int full = (int) Math.round(share * BAR);
            s.append('[')
                    .append("#".repeat(full))
                    .append(".".repeat(BAR - full))
                    .append("] ");
            s.append(String.format(Locale.ROOT, "%3.0f%% ", share * 100));
            String left = share <= 0
                    ? "?"
                    : Durations.approximately(Duration.ofMillis(Math.round(1000 * seconds * (1 - share) / share)));
            s.append(String.format(Locale.ROOT, "%,d lines, %,.0f lines/s, %s left", l, l / seconds, left));
        } else {
            s.append(String.format(Locale.ROOT, "%,d lines, %,.0f lines/s", l, l / seconds));
        }
        int width = s.length();
        while (s.length() < drawn) {
            s.append(' ');
        }
        drawn = width;
        err.print(s);
        err.flush();
    }

    /** Stops drawing and erases the bar. */
    @Override
    public void close() {
        synchronized (this) {
            done = true;
            if (drawn > 0) {
                err.print("\r" + " ".repeat(drawn) + "\r");
                err.flush();
            }
        }
        thread.interrupt();
    }

    /**
     * Whether this process's standard error is a terminal: where {@code /proc/self/fd/2} leads (a {@code /dev/pts/N} or
     * {@code /dev/ttyN}). False where there is no {@code /proc} (not Linux): no bar there.
     */
    static boolean stderrIsTerminal() {
        try {
            String target = Files.readSymbolicLink(Path.of("/proc/self/fd/2")).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (java.io.IOException | UnsupportedOperationException e) {
            return false; // not Linux: no bar
        }
    }
}
