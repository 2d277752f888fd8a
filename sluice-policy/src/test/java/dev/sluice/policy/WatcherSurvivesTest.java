package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The watcher outlives whatever the files do: each bad change is refused with its reason, counted, the last good
 * configuration stays in force (its limits enforced), and the next valid change is put in force.
 */
class WatcherSurvivesTest {

    @TempDir
    Path dir;

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    PolicyLimiter limiter;
    PolicyWatcher watcher;

    static String domain(String name, long limit) {
        return "domain: " + name + "\ndescriptors:\n  - {key: k, rate_limit: {unit: hour, requests_per_unit: " + limit
                + "}}\n";
    }

    void start(Path path) throws IOException {
        start(path, false, Policies::load);
    }

    void start(Path path, boolean allowRemoval, Function<Path, Policies> loader) throws IOException {
        limiter = PolicyLimiter.builder(Policies.load(path))
                .meterRegistry(registry)
                .build();
        watcher = PolicyWatcher.builder(limiter, path)
                .interval(Duration.ofMillis(50))
                .allowDomainRemoval(allowRemoval)
                .loader(loader)
                .start();
    }

    @AfterEach
    void close() {
        if (watcher != null) {
            watcher.close();
        }
        if (limiter != null) {
            limiter.close();
        }
    }

    double failures() {
        return registry.get(PolicyMetrics.CONFIG_LOADS)
                .tag("result", "failure")
                .counter()
                .count();
    }

    long limitOf(String domain) {
        return limiter.policies()
                .match(domain, Descriptor.of("k", "x"))
                .orElseThrow()
                .limits()
                .get(0)
                .requestsPerUnit();
    }

    /** Waits for the watcher to refuse a change, then checks that the limit of {@code domain} is still enforced. */
    PolicyWatcher.Reload awaitRefusedKeeping(String domain, long limit, double failuresBefore) {
        Eventually.await("the change refused", () -> failures() > failuresBefore);
        Eventually.await(
                "the refusal reported",
                () -> watcher.lastReload().map(r -> !r.succeeded()).orElse(false));
        PolicyWatcher.Reload r = watcher.lastReload().orElseThrow();
        assertEquals(1, limiter.version(), r::message);
        assertTrue(r.message().startsWith("refused, version 1 stays in force: "), r::message);
        assertEquals(limit, limitOf(domain));
        for (int i = 0; i < limit; i++) {
            assertTrue(limiter.check(domain, Descriptor.of("k", "x")).allowed());
        }
        assertFalse(limiter.check(domain, Descriptor.of("k", "x")).allowed(), "the last good limit is enforced");
        return r;
    }

    /**
     * Waits for a reload of at least {@code version} to succeed: one change can reach the watcher as more than one
     * file-system event, each a reload of its own, so the count of reloads is not what a test can fix.
     */
    void awaitVersion(long version) {
        Eventually.await("version " + version + " in force and reported", () -> watcher.lastReload()
                .map(r -> r.succeeded() && r.version() >= version)
                .orElse(false));
    }

    static void replace(Path file, String yaml) throws IOException {
        ReloadTest.replace(file, yaml);
    }

    @Test
    void aHugeFileIsRefusedAndALaterEditApplied() throws IOException {
        Path file = dir.resolve("a.yaml");
        Files.writeString(file, domain("a", 3));
        start(dir);
        // the domain's file replaced by a huge one, as a deployment replaces a file
        Path huge = ConfigLimitsTest.sparse(dir.resolve(".a.yaml.tmp"), 3L << 30);
        Files.move(huge, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        PolicyWatcher.Reload r = awaitRefusedKeeping("a", 3, 0);
        assertTrue(r.message().contains("a.yaml:1:1: the file is 3221225472 bytes long"), r::message);

        replace(file, domain("a", 4));
        awaitVersion(2);
        assertEquals(4, limitOf("a"));
        assertEquals(1, failures());
    }

    @Test
    void aDeeplyNestedFileIsRefusedAndALaterEditApplied() throws IOException {
        Path file = dir.resolve("a.yaml");
        Files.writeString(file, domain("a", 3));
        start(dir);
        replace(file, ConfigLimitsTest.nested(100_000));
        PolicyWatcher.Reload r = awaitRefusedKeeping("a", 3, 0);
        assertTrue(r.message().contains("a.yaml:3:57: nested too deeply"), r::message);

        replace(file, domain("a", 4));
        awaitVersion(2);
        assertEquals(4, limitOf("a"));
    }

    @Test
    void aDanglingLinkIsRefusedAndTheSwapsEndApplied() throws IOException {
        ReloadTest.publish(dir, "v1", domain("a", 3));
        start(dir);
        // a half-done ConfigMap swap: ..data points at a version directory that is not there (yet, or any more)
        Path tmp = dir.resolve("..data_tmp");
        Files.createSymbolicLink(tmp, Path.of("..v-gone"));
        Files.move(tmp, dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        PolicyWatcher.Reload r = awaitRefusedKeeping("a", 3, 0);
        assertTrue(
                r.message().contains("policy.yaml:0:0: a symbolic link to ..data/policy.yaml, which does not exist"),
                r::message);

        ReloadTest.publish(dir, "v2", domain("a", 4));
        awaitVersion(2);
        assertEquals(4, limitOf("a"));
    }

    @Test
    void anEmptiedDirectoryIsRefusedAndALaterFileApplied() throws IOException {
        Files.writeString(dir.resolve("a.yaml"), domain("a", 3));
        Files.writeString(dir.resolve("b.yaml"), domain("b", 5));
        start(dir);
        Files.delete(dir.resolve("a.yaml"));
        Files.delete(dir.resolve("b.yaml"));
        Eventually.await("the empty directory refused", () -> watcher.lastReload()
                .map(r -> !r.succeeded() && r.message().contains("domain 'b'"))
                .orElse(false));
        PolicyWatcher.Reload r = awaitRefusedKeeping("a", 3, 0);
        assertTrue(r.message().contains("a.yaml:0:0: domain: domain 'a' is in force but in no file now"), r::message);
        assertTrue(r.message().contains("b.yaml:0:0: domain: domain 'b' is in force but in no file now"), r::message);
        assertEquals(Set.of("a", "b"), limiter.policies().domains());

        replace(dir.resolve("a.yaml"), domain("a", 4)); // refused still: b is missing
        replace(dir.resolve("b.yaml"), domain("b", 6));
        // the watcher reports a reload just after the limiter has put it in force: wait for the report
        Eventually.await(
                "both files back in force",
                () -> watcher.lastReload().map(PolicyWatcher.Reload::succeeded).orElse(false));
        assertTrue(limiter.version() >= 2, "version " + limiter.version());
        assertEquals(4, limitOf("a"));
        assertEquals(6, limitOf("b"));
    }

    @Test
    void aDeletedFileIsRefusedAndALaterEditApplied() throws IOException {
        Files.writeString(dir.resolve("a.yaml"), domain("a", 3));
        Files.writeString(dir.resolve("b.yaml"), domain("b", 5));
        start(dir);
        Files.delete(dir.resolve("b.yaml"));
        PolicyWatcher.Reload r = awaitRefusedKeeping("b", 5, 0);
        assertTrue(r.message().contains("domain 'b' is in force but in no file now"), r::message);
        assertFalse(r.message().contains("domain 'a'"), r::message);

        // the file comes back, edited: in force
        Files.writeString(dir.resolve(".b.tmp"), domain("b", 7));
        Files.move(dir.resolve(".b.tmp"), dir.resolve("b.yaml"), StandardCopyOption.ATOMIC_MOVE);
        awaitVersion(2);
        assertEquals(7, limitOf("b"));
        assertEquals(3, limitOf("a"));
    }

    @Test
    void aDeletedFileIsAppliedWhenRemovalIsAllowed() throws IOException {
        Files.writeString(dir.resolve("a.yaml"), domain("a", 3));
        Files.writeString(dir.resolve("b.yaml"), domain("b", 5));
        start(dir, true, Policies::load);
        assertTrue(watcher.toString().contains("domain removal allowed"));
        Files.delete(dir.resolve("b.yaml"));
        awaitVersion(2);
        assertEquals(Set.of("a"), limiter.policies().domains());
        Files.delete(dir.resolve("a.yaml"));
        awaitVersion(3);
        assertEquals(Set.of(), limiter.policies().domains());
        assertEquals(0, failures());
    }

    @Test
    void aSingleDeletedFileIsRefusedAndItsReturnApplied() throws IOException {
        Path file = dir.resolve("a.yaml");
        Files.writeString(file, domain("a", 3));
        start(file);
        Files.delete(file);
        PolicyWatcher.Reload r = awaitRefusedKeeping("a", 3, 0);
        assertTrue(r.message().contains(file + ":0:0: no such file"), r::message);

        Files.writeString(dir.resolve(".a.tmp"), domain("a", 4));
        Files.move(dir.resolve(".a.tmp"), file, StandardCopyOption.ATOMIC_MOVE);
        awaitVersion(2);
        assertEquals(4, limitOf("a"));
    }

    @Test
    void aSingleFileOfAConfigMapIsWatchedThroughItsSwaps() throws IOException {
        ReloadTest.publish(dir, "v1", domain("a", 3));
        Files.writeString(dir.resolve("other.yaml"), "not: a policy\n"); // beside it, never loaded
        Path file = dir.resolve("policy.yaml");
        start(file);
        ReloadTest.publish(dir, "v2", domain("a", 4));
        awaitVersion(2);
        assertEquals(4, limitOf("a"));

        ReloadTest.publish(dir, "v3", ConfigLimitsTest.nested(1000));
        PolicyWatcher.Reload r = watcherRefusal(1);
        assertTrue(r.message().contains("policy.yaml:3:57: nested too deeply"), r::message);
        assertEquals(4, limitOf("a"));

        ReloadTest.publish(dir, "v4", domain("a", 5));
        awaitVersion(3);
        assertEquals(5, limitOf("a"));
    }

    PolicyWatcher.Reload watcherRefusal(double failures) {
        Eventually.await("the change refused", () -> failures() == failures);
        Eventually.await(
                "the refusal reported",
                () -> watcher.lastReload().map(r -> !r.succeeded()).orElse(false));
        return watcher.lastReload().orElseThrow();
    }

    @Test
    void anErrorOfTheJvmWhileLoadingIsCaughtCountedAndTheNextChangeApplied() throws IOException {
        Path file = dir.resolve("a.yaml");
        Files.writeString(file, domain("a", 3));
        AtomicInteger calls = new AtomicInteger();
        start(dir, false, p -> {
            if (calls.incrementAndGet() == 1) {
                throw new StackOverflowError("deep enough");
            }
            return Policies.load(p);
        });
        replace(file, domain("a", 4));
        PolicyWatcher.Reload r = awaitRefusedKeeping("a", 3, 0);
        assertEquals(
                "refused, version 1 stays in force: cannot load: java.lang.StackOverflowError: deep enough",
                r.message());

        replace(file, domain("a", 5));
        awaitVersion(2);
        assertEquals(5, limitOf("a"));
        assertEquals(1, failures());
    }

    @Test
    void reloadNowFollowsTheSameRules() throws IOException {
        Files.writeString(dir.resolve("a.yaml"), domain("a", 3));
        Files.writeString(dir.resolve("b.yaml"), domain("b", 5));
        start(dir);
        PolicyWatcher.Reload same = watcher.reloadNow();
        assertTrue(same.succeeded(), same::message);
        assertEquals(2, same.version());

        Files.delete(dir.resolve("b.yaml"));
        PolicyWatcher.Reload refused = watcher.reloadNow();
        assertFalse(refused.succeeded());
        assertTrue(refused.message().contains("domain 'b' is in force but in no file now"), refused::message);
        assertEquals(List.of(refused), watcher.lastReload().stream().toList());
        assertEquals(Set.of("a", "b"), limiter.policies().domains());
    }
}
