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
    void versionNamesTheBuildFromItsJar() {
        ServerProcess.Result r = ServerProcess.run("--version");
        assertEquals(0, r.status(), r.out() + r.err());
        String version = System.getProperty("sluice.server.version");
        assertTrue(version != null && !version.isBlank(), "the build passes its version to the tests");
        assertEquals(
                "sluice-server " + version + " (Java " + System.getProperty("java.version") + ")",
                r.out().strip(),
                r.err());
    }

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
    void checkConfigInAModeReportsTheLimitsThatModeCannotKeep() throws IOException {
        Path bucket = Files.writeString(
                dir.resolve("bucket.yaml"),
                """
                domain: bucket
                descriptors:
                  - key: client_id
                    rate_limit: {unit: second, requests_per_unit: 5, algorithm: token_bucket}
                  - key: user
                    rate_limit: {unit: second, requests_per_unit: 5, algorithm: sliding_tail}
                """);
        ServerProcess.Result exact = ServerProcess.run("check-config", bucket.toString());
        assertEquals(0, exact.status(), exact.err());
        ServerProcess.Result leased = ServerProcess.run("check-config", "--mode", "leased", bucket.toString());
        assertEquals(1, leased.status(), leased.out() + leased.err());
        assertTrue(
                leased.err()
                        .contains(
                                bucket + ":3:5: rule client_id, limit 5/second token_bucket: the store refuses it:"
                                        + " leased mode supports FIXED_WINDOW, SLIDING_WINDOW_COUNTER and SLIDING_TAIL, not TOKEN_BUCKET"),
                leased.err());
        assertTrue(leased.err().endsWith("1 error(s)"), leased.err());
        ServerProcess.Result sync = ServerProcess.run("check-config", "--mode", "synchronized", bucket.toString());
        assertEquals(1, sync.status());
        assertTrue(sync.err().contains("synchronized mode supports"), sync.err());
        Path basic = Files.writeString(dir.resolve("basic.yaml"), ServeScenarios.BASIC);
        ServerProcess.Result good = ServerProcess.run("check-config", "--mode", "leased", basic.toString());
        assertEquals(0, good.status(), good.err());
        assertTrue(
                good.out().contains(": OK, 1 domain(s) [basic], 3 rule(s) with limits, all kept in leased mode"),
                good.out());
        ServerProcess.Result bogus = ServerProcess.run("check-config", "--mode", "sharded", bucket.toString());
        assertEquals(2, bogus.status());
        assertTrue(
                bogus.err().contains("--mode 'sharded' is not valid: expected exact, synchronized or leased"),
                bogus.err());
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
        assertTrue(serve.out().contains("--over-limit-cache N"), serve.out());
        assertEquals(0, ServerProcess.run("check-config", "--help").status());
        assertEquals(0, ServerProcess.run("check", "--help").status());
        assertEquals(0, ServerProcess.run("--help").status());
    }
}
