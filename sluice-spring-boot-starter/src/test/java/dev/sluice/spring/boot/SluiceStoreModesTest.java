package dev.sluice.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.lease.LeasedStore;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.redis.RedisCounterStore;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.RateLimitStore;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code sluice.store.mode}: synchronized and leased mode on a real Redis, what each sets up, what it refuses at
 * start, and how two instances (two application contexts) share a limit. Each test uses client ids of its own,
 * and every context of a test reads one clock, stopped, so that no window turns under a test.
 */
class SluiceStoreModesTest {

    static final String FIVE_PER_DAY =
            """
            domain: api
            descriptors:
              - key: client_id
                rate_limit: {unit: day, requests_per_unit: 5}
            """;

    /**
     * An hour into the current UTC day: the rules' day frames then have the whole hour-long interval of a test ahead
     * of them, whatever the time the test runs (in the last hour of a day a slice is sized for what is left of it),
     * and every record's expiry lies ahead of the real clock Redis expires by.
     */
    final ManualClock clock =
            new ManualClock(Instant.now().truncatedTo(ChronoUnit.DAYS).plus(Duration.ofHours(1)));

    /** An instance of the application on the shared Redis, with the five-a-day policy unless a test says otherwise. */
    final ApplicationContextRunner onRedis = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
            .withBean(SluiceAutoConfiguration.CLOCK_BEAN, Clock.class, () -> clock)
            .withPropertyValues(
                    "sluice.policies.inline[0]=" + FIVE_PER_DAY,
                    "sluice.store.type=redis",
                    "sluice.store.uri=" + RedisServers.shared().uri());

    static List<Descriptor> newClient() {
        return List.of(Descriptor.of("client_id", UUID.randomUUID().toString()));
    }

    /** How many of {@code n} checks of {@code client} the limiter allows. */
    static int allowed(PolicyLimiter limiter, List<Descriptor> client, int n) {
        int allowed = 0;
        for (int i = 0; i < n; i++) {
            if (limiter.check("api", client, 1).allowed()) {
                allowed++;
            }
        }
        return allowed;
    }

    @Test
    void synchronizedModeIsASynchronizedStoreOnRedisCountersFlushedEveryInterval() {
        onRedis.withPropertyValues(
                        "sluice.store.mode=synchronized", "sluice.store.interval=250ms", "sluice.store.timeout=40ms")
                .run(context -> {
                    SynchronizedStore store = context.getBean(SynchronizedStore.class);
                    assertThat(context.getBean(RateLimitStore.class)).isSameAs(store);
                    assertEquals(Duration.ofMillis(250), store.interval());
                    CounterStore counters = context.getBean(CounterStore.class);
                    assertThat(counters).isInstanceOf(RedisCounterStore.class);
                    assertThat(counters.toString())
                            .as("flushes in the background: the counter store's own timeout, not sluice.store.timeout")
                            .endsWith(", timeout 1s]");
                    assertEquals(5, allowed(context.getBean(PolicyLimiter.class), newClient(), 7));
                });
    }

    @Test
    void leasedModeIsALeasedStoreOnRedisCountersBoundByTheStoreTimeout() {
        onRedis.withPropertyValues(
                        "sluice.store.mode=leased", "sluice.store.interval=250ms", "sluice.store.timeout=40ms")
                .run(context -> {
                    LeasedStore store = context.getBean(LeasedStore.class);
                    assertThat(context.getBean(RateLimitStore.class)).isSameAs(store);
                    assertEquals(Duration.ofMillis(250), store.interval());
                    assertThat(store.toString())
                            .as("the store's own failure policy is left alone: the domain's on_store_failure answers")
                            .contains("FAIL_CLOSED");
                    CounterStore counters = context.getBean(CounterStore.class);
                    assertThat(counters).isInstanceOf(RedisCounterStore.class);
                    assertThat(counters.toString())
                            .as("a claim is on a request's thread: sluice.store.timeout")
                            .endsWith(", timeout 40ms]");
                    assertEquals(5, allowed(context.getBean(PolicyLimiter.class), newClient(), 7));
                });
    }

    @Test
    void leasedModeWithoutAStoreTimeoutClaimsWithinTheExactStoresDefault() {
        onRedis.withPropertyValues("sluice.store.mode=leased").run(context -> {
            assertEquals(
                    Duration.ofMillis(100), context.getBean(LeasedStore.class).interval());
            assertThat(context.getBean(CounterStore.class).toString()).endsWith(", timeout 250ms]");
        });
    }

    @Test
    void twoInstancesInLeasedModeAdmitTheLimitBetweenThemAndNeverMore() {
        ApplicationContextRunner leased = onRedis.withPropertyValues("sluice.store.mode=leased");
        List<Descriptor> client = newClient();
        leased.run(a -> leased.run(b -> {
            List<PolicyLimiter> instances = List.of(a.getBean(PolicyLimiter.class), b.getBean(PolicyLimiter.class));
            int[] allowed = new int[2];
            for (int i = 0; i < 40; i++) {
                if (instances.get(i % 2).check("api", client, 1).allowed()) {
                    allowed[i % 2]++;
                }
            }
            assertEquals(
                    5,
                    allowed[0] + allowed[1],
                    "allowed by the first and second instance: " + allowed[0] + " + " + allowed[1]);
            assertTrue(
                    allowed[0] > 0 && allowed[1] > 0,
                    "each instance admitted some: " + allowed[0] + " + " + allowed[1]);
        }));
    }

    @Test
    void twoInstancesInSynchronizedModeMayPassTheLimitByWhatTheOtherAdmitsInAnInterval() {
        // no flush for an hour: neither instance sees what the other admits
        ApplicationContextRunner sync =
                onRedis.withPropertyValues("sluice.store.mode=synchronized", "sluice.store.interval=1h");
        List<Descriptor> client = newClient();
        sync.run(a -> sync.run(b -> {
            List<PolicyLimiter> instances = List.of(a.getBean(PolicyLimiter.class), b.getBean(PolicyLimiter.class));
            int[] allowed = new int[2];
            for (int i = 0; i < 40; i++) {
                if (instances.get(i % 2).check("api", client, 1).allowed()) {
                    allowed[i % 2]++;
                }
            }
            assertEquals(5, allowed[0], "the first instance, on its own counts");
            assertEquals(5, allowed[1], "the second instance, on its own counts");
        }));
    }

    @Test
    void closingSynchronizedModeFlushesWhatItAdmittedBeforeItsCounterStoreCloses() {
        // no flush for an hour: only closing the context writes the three requests
        ApplicationContextRunner sync =
                onRedis.withPropertyValues("sluice.store.mode=synchronized", "sluice.store.interval=1h");
        List<Descriptor> client = newClient();
        sync.run(first -> assertEquals(3, allowed(first.getBean(PolicyLimiter.class), client, 3)));
        sync.run(next -> assertEquals(2, allowed(next.getBean(PolicyLimiter.class), client, 5), "5 - 3 flushed"));
    }

    @Test
    void closingLeasedModeGivesBackTheUnusedSlicesBeforeItsCounterStoreCloses() {
        // no round for an hour: only closing the context gives back what the first instance holds unused
        ApplicationContextRunner leased =
                onRedis.withPropertyValues("sluice.store.mode=leased", "sluice.store.interval=1h");
        List<Descriptor> client = newClient();
        AtomicReference<LeasedStore> store = new AtomicReference<>();
        AtomicReference<RedisCounterStore> counters = new AtomicReference<>();
        leased.run(first -> {
            assertEquals(2, allowed(first.getBean(PolicyLimiter.class), client, 2));
            store.set(first.getBean(LeasedStore.class));
            counters.set(first.getBean(RedisCounterStore.class));
            assertTrue(
                    store.get().unusedPermits() > 0,
                    "a slice larger than what was used: " + store.get().stats());
        });
        assertThat(store.get().toString()).endsWith(", closed]");
        assertFalse(counters.get().isConnected(), "the counter store is closed too");
        leased.run(next -> assertEquals(3, allowed(next.getBean(PolicyLimiter.class), client, 5), "5 - 2 used"));
    }

    @Test
    void aModeOtherThanExactOnTheInMemoryStoreFailsTheStartNamingBoth() {
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(SluiceAutoConfiguration.class))
                .withPropertyValues("sluice.store.mode=leased")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessage("sluice.store.mode=leased needs a shared store, and sluice.store.type is memory:"
                                + " set sluice.store.type to redis, postgresql or mongodb, or sluice.store.mode to"
                                + " exact"));
    }

    @Test
    void anUnknownModeFailsTheStartNamingTheProperty() {
        onRedis.withPropertyValues("sluice.store.mode=sharded").run(context -> assertThat(context)
                .getFailure()
                .hasStackTraceContaining(BindException.class.getName() + ": Failed to bind properties under"
                        + " 'sluice.store.mode' to dev.sluice.spring.boot.SluiceProperties$StoreMode")
                .rootCause()
                .hasMessageContaining("sharded"));
    }

    @Test
    void aNegativeOverLimitCacheFailsTheStartNamingTheProperty() {
        onRedis.withPropertyValues("sluice.store.over-limit-cache=-1").run(context -> assertThat(context)
                .getFailure()
                .rootCause()
                .hasMessage("sluice.store.over-limit-cache must be >= 0 entries, was -1"));
    }

    @Test
    void anOverLimitCacheWhereItHasNoEffectIsWarnedOfAndOnlyThere() {
        Logger log = Logger.getLogger(SluiceStoreConfigurations.class.getName());
        List<String> warnings = new CopyOnWriteArrayList<>();
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
                    warnings.add(r.getMessage());
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        log.addHandler(handler);
        try {
            onRedis.withPropertyValues("sluice.store.mode=leased", "sluice.store.over-limit-cache=100")
                    .run(context -> assertThat(context).hasNotFailed());
            onRedis.withPropertyValues("sluice.store.type=memory", "sluice.store.over-limit-cache=100")
                    .run(context -> assertThat(context).hasNotFailed());
            onRedis.withPropertyValues("sluice.store.over-limit-cache=100")
                    .run(context -> assertThat(context).hasNotFailed());
            assertThat(warnings)
                    .as("leased mode and the in-memory store warned of, exact mode on Redis (which keeps it) not")
                    .containsExactly(
                            "sluice.store.over-limit-cache has no effect in leased mode, which decides locally"
                                    + " already",
                            "sluice.store.over-limit-cache has no effect on the in-memory store, which makes no"
                                    + " store calls");
        } finally {
            log.removeHandler(handler);
        }
    }

    @Test
    void aNonPositiveIntervalFailsTheStartNamingTheProperty() {
        onRedis.withPropertyValues("sluice.store.mode=synchronized", "sluice.store.interval=0s")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessage("sluice.store.interval must be > 0, was 0s"));
    }

    @Test
    void aLimitLeasedModeCannotKeepFailsTheStartAtItsRule() {
        onRedis.withPropertyValues(
                        "sluice.store.mode=leased",
                        "sluice.policies.inline[0]=domain: api\ndescriptors:\n  - key: client_id\n"
                                + "    rate_limit: {unit: day, requests_per_unit: 5, algorithm: token_bucket}\n")
                .run(context -> assertThat(context)
                        .getFailure()
                        .rootCause()
                        .hasMessageContaining(
                                "sluice.policies.inline[0]:3:5: rule client_id, limit 5/day token_bucket: the"
                                        + " store refuses it")
                        .hasMessageContaining("leased mode supports FIXED_WINDOW, SLIDING_WINDOW_COUNTER and"
                                + " SLIDING_TAIL, not TOKEN_BUCKET"));
    }

    @Test
    void aReloadLeasedModeCannotKeepIsRefusedAndThePoliciesInForceStay(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("api.yaml");
        Files.writeString(file, FIVE_PER_DAY);
        onRedis.withPropertyValues(
                        "sluice.store.mode=leased",
                        "sluice.policies.location=" + file,
                        "sluice.policies.watch-interval=100ms")
                .run(context -> {
                    PolicyLimiter limiter = context.getBean(PolicyLimiter.class);
                    SluiceReloads reloads = context.getBean(SluiceReloads.class);
                    List<Descriptor> client = newClient();
                    assertEquals(2, allowed(limiter, client, 2));
                    Path next = dir.resolve(".api.yaml.next");
                    Files.writeString(
                            next,
                            FIVE_PER_DAY.replace(
                                    "requests_per_unit: 5", "requests_per_unit: 50," + " algorithm: sliding_log"));
                    Files.move(next, file, StandardCopyOption.ATOMIC_MOVE);
                    Await.until("the reload refused", Await.GENEROUS, () -> !reloads.lastReload()
                            .succeeded());
                    assertThat(reloads.lastReload().message())
                            .startsWith("refused, version 1 stays in force")
                            .contains(file + ":3:5: rule client_id, limit 50/day sliding_log: the store refuses it")
                            .contains("not SLIDING_LOG");
                    assertEquals(1, limiter.version());
                    assertEquals(3, allowed(limiter, client, 5), "five a day, two of them taken");
                });
    }
}
