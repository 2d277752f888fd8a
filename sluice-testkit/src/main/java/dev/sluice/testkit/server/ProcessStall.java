package dev.sluice.testkit.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A server stalled as a paused machine would stall it: every process of it stopped ({@code SIGSTOP}) until
 * {@link #close()} lets them go on ({@code SIGCONT}). What clients send meanwhile waits in the server's sockets and
 * is read when it wakes. Unix only.
 */
public final class ProcessStall implements AutoCloseable {

    private final List<Long> pids;

    private ProcessStall(List<Long> pids) {
        this.pids = List.copyOf(pids);
        signal("STOP");
        awaitStopped();
    }

    /**
     * Waits until every thread of every process is stopped. {@code kill} returns once the signal is sent, while a
     * thread running on another core, or finishing a system call, may still read a request and answer it for a moment;
     * a caller that sends requests right after must find the server stopped. Where the state cannot be read (no
     * {@code /proc}), returns at once.
     */
    private void awaitStopped() {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (long pid : pids) {
            Path tasks = Path.of("/proc", Long.toString(pid), "task");
            while (!allStopped(tasks)) {
                if (System.nanoTime() - until > 0) {
                    throw new IllegalStateException("process " + pid + " did not stop within 10 s of SIGSTOP");
                }
                try {
                    Thread.sleep(1); // stopping takes a few milliseconds; a spin would take a core from the server
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted waiting for process " + pid + " to stop", e);
                }
            }
        }
    }

    /** Whether every thread under {@code tasks} is stopped or ended; true where they cannot be listed. */
    private static boolean allStopped(Path tasks) {
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
            for (Path thread : threads) {
                String stat;
                try {
                    stat = Files.readString(thread.resolve("stat"));
                } catch (NoSuchFileException e) {
                    continue; // the thread ended
                }
                // "pid (name) S ...": the state follows the name's closing parenthesis, which the name may contain
                int close = stat.lastIndexOf(')');
                char state = close >= 0 && close + 2 < stat.length() ? stat.charAt(close + 2) : '?';
                if (state != 'T' && state != 't' && state != 'Z' && state != 'X') { // stopped, or ended
                    return false;
                }
            }
            return true;
        } catch (NoSuchFileException e) {
            return true; // no /proc here, or the process is gone: nothing to wait for
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + tasks, e);
        }
    }

    /** Stops the processes {@code pids} at once. */
    public static ProcessStall of(List<Long> pids) {
        if (pids.isEmpty()) {
            throw new IllegalArgumentException("no process to stall");
        }
        return new ProcessStall(pids);
    }

    private void signal(String signal) {
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
        pids.forEach(p -> command.add(Long.toString(p)));
        try {
            Process kill = new ProcessBuilder(command).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " failed");
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", command), e);
        }
    }

    /** Lets the processes go on ({@code SIGCONT}). */
    @Override
    public void close() {
        signal("CONT");
    }

    @Override
    public String toString() {
        return "ProcessStall" + pids;
    }
}
