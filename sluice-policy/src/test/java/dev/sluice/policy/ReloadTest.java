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
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Reload without restart: atomic under load, through a ConfigMap-style symlink swap; a bad file changes nothing. */
class ReloadTest {

    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    /** Two rules with the same limit, {@code n}: a check that saw two configurations would see two numbers. */
    static String config(long n) {
        return """
                domain: d
                descriptors:
                  - {key: a, rate_limit: {unit: hour, requests_per_unit: %d}}
                  - {key: b, rate_limit: {unit: hour, requests_per_unit: %d}}
                """
                .formatted(n, n);
    }

    /** A Kubernetes ConfigMap mount: {@code policy.yaml -> ..data/policy.yaml}, {@code ..data -> ..version}. */
    static void publish(Path dir, String version, String yaml) throws IOException {
        Path versionDir = dir.resolve(".." + version);
        Files.createDirectories(versionDir);
        Files.writeString(versionDir.resolve("policy.yaml"), yaml);
        Path tmp = dir.resolve("..data_tmp");
        Files.deleteIfExists(tmp);
        Files.createSymbolicLink(tmp, versionDir.getFileName());
        Files.move(tmp, dir.resolve("..data"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        Path link = dir.resolve("policy.yaml");
        if (!Files.isSymbolicLink(link)) {
            Files.createSymbolicLink(link, Path.of("..data", "policy.yaml"));
        }
    }

    /**
     * Replaces a file's content in one step, as a deployment does: written beside it under a name that is no policy
     * file, then moved over it. A plain write could be read half done by the watcher and count a failure of its own.
     */
    static void replace(Path file, String yaml) throws IOException {
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, yaml);
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    static long limitInForce(PolicyLimiter l) {
        return l.policies()
                .match("d", Descriptor.of("a", "x"))
                .orElseThrow()
                .limits()
                .get(0)
                .requestsPerUnit();
    }

    double loads(String result) {
        return registry.get(PolicyMetrics.CONFIG_LOADS)
                .tag("result", result)
                .counter()
                .count();
    }

    @Test
    void checksNeverSeeAMixOfTwoConfigurationsWhileTheDirectoryIsSwapped(@TempDir Path dir) throws Exception {
        publish(dir, "v0", config(1_000_000));
        PolicyLimiter limiter = PolicyLimiter.builder(Policies.load(dir))
                .meterRegistry(registry)
                .build();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong mixed = new AtomicLong();
        AtomicLong checks = new AtomicLong();
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 6; t++) {
            Thread th = new Thread(() -> {
                List<Descriptor> request = List.of(Descriptor.of("a", "x"), Descriptor.of("b", "y"));
                while (!stop.get()) {
                    Verdict v = limiter.check("d", request, 1);
                    long first = v.descriptor(0).limits().get(0).limit().requestsPerUnit();
                    long second = v.descriptor(1).limits().get(0).limit().requestsPerUnit();
                    if (first != second || !v.allowed()) {
                        mixed.incrementAndGet();
                    }
                    seen.add(first);
                    checks.incrementAndGet();
                }
            });
            th.start();
            threads.add(th);
        }
        try (PolicyWatcher watcher = PolicyWatcher.start(limiter, dir, Duration.ofMillis(50))) {
            for (int i = 1; i <= 6; i++) {
                long n = i % 2 == 0 ? 1_000_000 : 2_000_000;
                publish(dir, "v" + i, config(n));
                long expectedVersion = i + 1;
                Eventually.await("version " + expectedVersion, () -> limiter.version() == expectedVersion);
                assertEquals(n, limitInForce(limiter));
                long before = checks.get();
                Eventually.await("checks under version " + expectedVersion, () -> checks.get() > before + 100);
            }
            assertTrue(watcher.toString().contains(dir.toString()));
        } finally {
            stop.set(true);
            for (Thread th : threads) {
                th.join();
            }
        }
        assertEquals(0, mixed.get(), "checks that saw two configurations at once, or were refused");
        assertEquals(Set.of(1_000_000L, 2_000_000L), seen);
        assertEquals(7, loads("success"));
        assertEquals(7, registry.get(PolicyMetrics.CONFIG_VERSION).gauge().value());
        limiter.close();
    }

    @Test
    void aBrokenFileLeavesTheLastGoodConfigurationInForce(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("policy.yaml");
        Files.writeString(file, config(5));
        PolicyLimiter limiter = PolicyLimiter.builder(Policies.load(dir))
                .meterRegistry(registry)
                .build();
        PolicyWatcher watcher = PolicyWatcher.start(limiter, dir, Duration.ofMillis(50));
        try {
            replace(file, "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: fortnight}\n");
            Eventually.await("the failed load to be counted", () -> loads("failure") == 1);
            assertEquals(1, limiter.version());
            assertEquals(5, limitInForce(limiter));
            assertEquals(1, registry.get(PolicyMetrics.CONFIG_VERSION).gauge().value());
            List<Descriptor> request = List.of(Descriptor.of("a", "x"));
            for (int i = 0; i < 5; i++) {
                assertTrue(limiter.check("d", request, 1).allowed());
            }
            assertFalse(limiter.check("d", request, 1).allowed(), "the old limit of 5 is still enforced");

            replace(file, config(7));
            Eventually.await("the fixed file to load", () -> limiter.version() == 2);
            assertEquals(7, limitInForce(limiter));
            assertEquals(2, loads("success"));
            assertEquals(1, loads("failure"));
        } finally {
            watcher.close();
        }
        limiter.close();
    }

    @Test
    void reloadOfABadPathReturnsFalseAndKeepsTheConfiguration(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("p.yaml"), config(3));
        PolicyLimiter limiter = PolicyLimiter.builder(Policies.load(dir))
                .meterRegistry(registry)
                .build();
        Files.writeString(dir.resolve("q.yaml"), config(4));
        assertFalse(limiter.reload(dir), "two files of domain d");
        assertEquals(3, limitInForce(limiter));
        assertEquals(1, loads("failure"));
        limiter.close();
    }

    @Test
    void aSingleFileIsWatchedAndTheLastReloadSaysWhatHappened(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("policy.yaml");
        Files.writeString(file, config(5));
        Files.writeString(dir.resolve("other.yaml"), "not: a policy\n"); // beside it, never loaded
        PolicyLimiter limiter = PolicyLimiter.builder(Policies.load(file))
                .meterRegistry(registry)
                .build();
        try (PolicyWatcher watcher = PolicyWatcher.start(limiter, file, Duration.ofMillis(50))) {
            assertTrue(watcher.lastReload().isEmpty(), "nothing changed yet");

            replace(file, config(8));
            // the watcher records the reload after the limiter has put it in force: wait for the record
            Eventually.await(
                    "the changed file to load and be reported",
                    () -> watcher.lastReload().map(r -> r.version() == 2).orElse(false));
            assertEquals(2, limiter.version());
            assertEquals(8, limitInForce(limiter));
            PolicyWatcher.Reload ok = watcher.lastReload().orElseThrow();
            assertTrue(ok.succeeded());
            assertEquals(file, ok.source());
            assertEquals(2, ok.version());
            assertEquals("version 2 in force", ok.message());

            replace(file, "domain: d\ndescriptors:\n  - key: a\n    rate_limit: {unit: fortnight}\n");
            Eventually.await("the failed load", () -> loads("failure") == 1);
            Eventually.await(
                    "the failure to be reported",
                    () -> !watcher.lastReload().orElseThrow().succeeded());
            PolicyWatcher.Reload refused = watcher.lastReload().orElseThrow();
            assertEquals(2, refused.version());
            assertTrue(refused.message().startsWith("refused, version 2 stays in force: "), refused.message());
            assertTrue(refused.message().contains(file + ":4:"), refused.message());
            assertEquals(8, limitInForce(limiter));
        }
        limiter.close();
    }

    /** A reload keeps the in-memory count of every limit whose rule did not change; a changed limit starts again. */
    @Test
    void aReloadKeepsTheCountsOfUnchangedLimits() {
        String yaml =
                """
                domain: d
                descriptors:
                  - {key: a, rate_limit: {unit: minute, requests_per_unit: 5}}
                  - {key: b, rate_limit: {unit: minute, requests_per_unit: %d}}
                """;
        try (PolicyLimiter l = PolicyLimiter.builder(Policies.parse("d.yaml", yaml.formatted(3)))
                .clock(Clocks.atHourStart())
                .build()) {
            List<Descriptor> a = List.of(Descriptor.of("a", "x"));
            List<Descriptor> b = List.of(Descriptor.of("b", "x"));
            for (int i = 0; i < 4; i++) {
                assertTrue(l.check("d", a, 1).allowed());
            }
            for (int i = 0; i < 3; i++) {
                assertTrue(l.check("d", b, 1).allowed());
            }
            l.update(Policies.parse("d.yaml", yaml.formatted(3))); // the same configuration again
            assertEquals(0, l.check("d", a, 1).descriptor(0).remaining(), "a's 4 kept: the fifth takes the last");
            assertFalse(l.check("d", a, 1).allowed(), "a's limit of 5 is spent across the reload");
            assertFalse(l.check("d", b, 1).allowed(), "b's 3 kept");

            l.update(Policies.parse("d.yaml", yaml.formatted(4))); // b's limit changes, a's rule does not
            assertFalse(l.check("d", a, 1).allowed(), "a's count kept again");
            Verdict fresh = l.check("d", b, 1);
            assertTrue(fresh.allowed());
            assertEquals(3, fresh.descriptor(0).remaining(), "b's changed limit starts from zero");
        }
    }
}
