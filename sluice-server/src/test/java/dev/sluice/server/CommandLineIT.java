package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The jar's commands run to their end: check-config, help, and bad command lines (exit 2 naming the problem). */
class CommandLineIT {
    @TempDir
    Path dir;

    @Test
    void checkConfigPrintsEveryErrorAsFileLineColumn() throws IOException {
        Path good = Files.writeString(dir.resolve("good.yaml"), ServeScenarios.BASIC);
        Path bad = Files.writeString(
                dir.resolve("bad.yaml"),
                """
                domain: bad
                descriptors:
                  - key: client_id
                    rate_limit: {unit: fortnight, requests_per_unit: 5}
                  - key: ip
                    ratelimit: {unit: second, requests_per_unit: 5}
                """);
        ServerProcess.Result r = ServerProcess.run("check-config", good.toString(), bad.toString());
        assertEquals(1, r.status(), r.out() + r.err());
        assertTrue(r.out().contains(good + ": OK, 1 domain(s) [basic], 3 rule(s) with limits"), r.out());
        assertTrue(r.err().contains(bad + ":4:24: descriptors[0].rate_limit.unit: "), r.err());
        assertTrue(r.err().contains(bad + ":6:5: descriptors[1].ratelimit: "), r.err());
        assertTrue(r.err().contains("rate_limit"), r.err());
        assertTrue(r.err().endsWith("2 error(s)"), r.err());

        ServerProcess.Result ok = ServerProcess.run("check-config", good.toString());
        assertEquals(0, ok.status(), ok.err());
    }

    @Test
    void badCommandLinesExitWith2NamingTheOptionAndValue() {
        ServerProcess.Result port = ServerProcess.run("serve", "--http-port", "eighty");
        assertEquals(2, port.status());
        assertEquals(
                "sluice-server serve: --http-port 'eighty' is not valid: expected a port number from 0 to 65535"
                        + " (0: any free port)",
                port.err());
        ServerProcess.Result unknown = ServerProcess.run("serve", "--grpc-prot", "1");
        assertEquals(2, unknown.status());
        assertTrue(unknown.err().contains("unknown option '--grpc-prot'"), unknown.err());
        ServerProcess.Result store = ServerProcess.run("serve", "--store", "cassandra://x");
        assertEquals(2, store.status());
        assertTrue(store.err().contains("--store 'cassandra://x' is not valid"), store.err());
        ServerProcess.Result both = ServerProcess.run(
                "serve", "--store", "redis://127.0.0.1:1", "--sync-interval", "100ms", "--lease-interval", "100ms");
        assertEquals(2, both.status());
        assertTrue(
                both.err().contains("--sync-interval (synchronized mode) or --lease-interval (leased mode), not both"),
                both.err());
        ServerProcess.Result leasedInMemory = ServerProcess.run("serve", "--lease-interval", "100ms");
        assertEquals(2, leasedInMemory.status());
        assertTrue(
                leasedInMemory.err().contains("--lease-interval needs a shared store, not memory:"),
                leasedInMemory.err());
        ServerProcess.Result command = ServerProcess.run("srve");
        assertEquals(2, command.status());
        assertTrue(command.err().contains("unknown command 'srve'"), command.err());
    }

    @Test
    void everyCommandHasHelp() {
        ServerProcess.Result serve = ServerProcess.run("serve", "--help");
        assertEquals(0, serve.status());
        assertTrue(serve.out().contains("--sync-interval D"), serve.out());
        assertTrue(serve.out().contains("--lease-interval D"), serve.out());
        assertEquals(0, ServerProcess.run("check-config", "--help").status());
        assertEquals(0, ServerProcess.run("check", "--help").status());
        assertEquals(0, ServerProcess.run("--help").status());
    }
}
