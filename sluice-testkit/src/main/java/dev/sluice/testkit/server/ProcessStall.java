package dev.sluice.testkit.server;

import java.io.IOException;
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
