package dev.sluice.postgres;

import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * A PostgreSQL server stalled: its postmaster and every server process stopped by {@code SIGSTOP}, as a server that
 * hangs (a frozen VM, a swapping host) looks to its clients; the TCP connections stay open and take what is sent.
 * Closing it sends {@code SIGCONT}. Linux only; the server must run on this machine.
 */
final class Stall implements AutoCloseable {

    private final List<Long> pids;

    private Stall(List<Long> pids) {
        this.pids = pids;
        signal("STOP");
    }

    /** Stops the server that {@code dataSource} connects to: the parent of one of its server processes, and all its. */
    static Stall of(DataSource dataSource) throws SQLException {
        long backend;
        try (Connection c = dataSource.getConnection();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
            rs.next();
            backend = rs.getLong(1);
        }
        ProcessHandle postmaster = ProcessHandle.of(backend)
                .flatMap(ProcessHandle::parent)
                .orElseThrow(() -> new IllegalStateException("no parent of the server process " + backend));
        List<Long> pids = new ArrayList<>();
        pids.add(postmaster.pid());
        postmaster.children().forEach(p -> pids.add(p.pid()));
        return new Stall(pids);
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

    @Override
    public void close() {
        signal("CONT");
    }
}
