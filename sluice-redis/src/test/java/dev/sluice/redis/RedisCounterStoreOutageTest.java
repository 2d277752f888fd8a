package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import dev.sluice.RateLimiter;
import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterWrite;
import dev.sluice.sync.SynchronizedStore;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.ManualClock;
import dev.sluice.testkit.server.RedisServer;
import dev.sluice.testkit.server.RedisServers;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Redis that goes down or stalls under the counter store: every call fails with a {@link SluiceException} within the
 * store's timeout (never a hang, never a raw driver exception), a write whose answer was lost may still have been
 * applied (which is why the store throws rather than answer "not applied"), and the synchronized store settles it by
 * a read instead of writing the counts twice. Each test runs its own server.
 *
 * <p>These tests are about the store's timeout (2 s), so it is short next to other tests' ({@link Servers#PATIENCE});
 * it is still wide enough that a call Redis answers, made once the client is connected (each test waits for that),
 * never runs out of it on a loaded machine. A stall ({@code CLIENT PAUSE}) lasts {@value #PAUSE_MILLIS} ms, five
 * times the timeout, so that the calls made during it are cut off by the timeout before the stall ends even if the
 * test thread waits seconds for the CPU before making them. A stall of writes ({@code CLIENT PAUSE ... WRITE}, which
 * holds every script) is ended by {@code CLIENT UNPAUSE} once the call has failed, instead of waiting it out. The {@code assertTimeoutPreemptively} bounds (30 s) are
 * hang detectors, not timing claims; that the store's own timeout ended a wait is shown by the failure's cause instead.
 */
class RedisCounterStoreOutageTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final long PAUSE_MILLIS = 10_000;
    private static final Duration HANG = Duration.ofSeconds(30);
    private static final Duration RECOVERY = Await.GENEROUS;

    private final String run = UUID.randomUUID().toString().substring(0, 8);

    /**
     * A server killed mid-run: reads and writes fail with a {@link SluiceException} at once, not by the store's
     * timeout, with the recommended client options and with Lettuce's defaults alike (where commands would wait in a
     * queue while disconnected: the store does not send them on a lost connection); restarted on the same port, the
     * same store works again.
     */
    @ParameterizedTest(name = "recommended client options: {0}")
    @ValueSource(booleans = {true, false})
    void aKilledServerFailsEveryCallThenTheSameStoreWorksOnceItIsBack(boolean recommended) {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            if (recommended) {
                client.setOptions(RedisStore.recommendedClientOptions());
            }
            try (RedisCounterStore store =
                    RedisStore.counterStoreBuilder(client).timeout(TIMEOUT).build()) {
                CounterKey id = new CounterKey("outage", run);
                awaitRecovery(store, id);
                assertArrayEquals(
                        new boolean[] {true}, store.compareAndSet(List.of(write(id, CounterSnapshot.ABSENT, 1))));

                server.stop();
                // the client learns of the loss from its socket, a moment after the kill; a call made before that is
                // sent on the old connection and ends by the timeout
                Await.until("the store sees its connection lost", RECOVERY, () -> !store.isConnected());

                SluiceException read = assertThrows(
                        SluiceException.class, () -> assertTimeoutPreemptively(HANG, () -> store.load(List.of(id))));
                SluiceException written = assertThrows(
                        SluiceException.class,
                        () -> assertTimeoutPreemptively(HANG, () -> store.compareAndSet(List.of(write(id, 1, 2)))));
                for (SluiceException e : List.of(read, written)) {
                    assertTrue(e.getCause() != null, "the cause is given: " + e);
                    assertFalse(causedBy(e, TimeoutException.class), "not by the timeout: " + e);
                }

                server.restart();
                awaitRecovery(store, id);
                // this server keeps nothing across a kill: the record is gone, and is created again
                assertEquals(CounterSnapshot.absent(), store.load(List.of(id)).get(0));
                assertArrayEquals(
                        new boolean[] {true, false},
                        store.compareAndSet(List.of(
                                write(id, CounterSnapshot.ABSENT, 3),
                                write(new CounterKey("outage", run + ":other"), 9, 4))));
                assertEquals(
                        new CounterSnapshot(3, Map.of(60_000L, 3L)),
                        store.load(List.of(id)).get(0));
            } finally {
                client.shutdown();
            }
        }
    }

    /**
     * A server that answers nothing for a while ({@code CLIENT PAUSE}) while a compare-and-set is in flight: the call
     * fails by the store's timeout, yet Redis runs the write once the pause ends. Answering "not applied" would have
     * been wrong; the store throws, and the outcome is for the caller to read.
     */
    @Test
    void aWriteWhoseAnswerIsLostFailsAndMayStillBeApplied() {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            client.setOptions(RedisStore.recommendedClientOptions());
            try (RedisCounterStore store =
                    RedisStore.counterStoreBuilder(client).timeout(TIMEOUT).build()) {
                CounterKey id = new CounterKey("stalled", run);
                awaitRecovery(store, id);
                assertArrayEquals(
                        new boolean[] {true}, store.compareAndSet(List.of(write(id, CounterSnapshot.ABSENT, 1))));

                server.call("CLIENT", "PAUSE", Long.toString(PAUSE_MILLIS), "WRITE");
                SluiceException e = assertThrows(
                        SluiceException.class,
                        () -> assertTimeoutPreemptively(HANG, () -> store.compareAndSet(List.of(write(id, 1, 2)))));
                assertTrue(causedBy(e, TimeoutException.class), "caused by the timeout: " + e);
                server.call("CLIENT", "UNPAUSE");

                awaitRecovery(store, id);
                assertEquals(
                        new CounterSnapshot(2, Map.of(60_000L, 2L)),
                        store.load(List.of(id)).get(0),
                        "applied after the pause");
            } finally {
                client.shutdown();
            }
        }
    }

    /**
     * The same through a synchronized store: 3 requests admitted and flushed, 2 more, and that flush cut off by a
     * stall; the next flush reads the record first, finds its own write applied, and writes nothing again. The record
     * holds 5, not 7, and no write is counted as doubtful. (The first flush also has the server cache the script: an
     * {@code EVALSHA} of a script the server does not know yet would be refused with {@code NOSCRIPT} once the pause
     * ends, and its cancelled call would never resend it, so that write would be settled as not applied instead.)
     */
    @Test
    void aFlushCutOffByAStallIsSettledByAReadNotWrittenTwice() {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            client.setOptions(RedisStore.recommendedClientOptions());
            try (RedisCounterStore store =
                    RedisStore.counterStoreBuilder(client).timeout(TIMEOUT).build()) {
                ManualClock clock = new ManualClock(
                        Instant.now().truncatedTo(ChronoUnit.HOURS).plus(1, ChronoUnit.HOURS));
                SynchronizedStore sync =
                        SynchronizedStore.builder(store).manualRounds().build();
                RateLimiter limiter = RateLimiter.builder(Algorithm.FIXED_WINDOW)
                        .limit(100, Duration.ofHours(1))
                        .clock(clock)
                        .store(sync)
                        .build();
                String key = run + ":flush";
                CounterKey id = new CounterKey("fw:3600000000000", key);
                awaitRecovery(store, id);
                assertEquals(3, admitted(limiter, key, 3));
                assertTrue(sync.flush());
                assertEquals(3, store.load(List.of(id)).get(0).total());
                assertEquals(2, admitted(limiter, key, 2));

                server.call("CLIENT", "PAUSE", Long.toString(PAUSE_MILLIS), "WRITE");
                assertFalse(assertTimeoutPreemptively(HANG, sync::flush), "a flush during the stall");
                server.call("CLIENT", "UNPAUSE");
                assertEquals(1, sync.stats().storeFailures());
                assertEquals(1, sync.stats().writes());

                awaitRecovery(store, id);
                assertTrue(sync.flush());
                assertEquals(1, sync.stats().writes(), "nothing written again");
                assertEquals(0, sync.stats().doubtfulWrites());
                assertEquals(1, sync.stats().storeFailures());
                assertEquals(5, store.load(List.of(id)).get(0).total());
                assertEquals(95, limiter.peek(key, 1).remaining());
            } finally {
                client.shutdown();
            }
        }
    }

    /**
     * A connection attempt outlives the build that waited for it: a server that accepts the connection but answers
     * nothing for a while (paused before the store is built) holds up Lettuce's handshake past the builder's
     * {@code startupTimeout}. The build returns all the same; calls fail at once while the one attempt is under way
     * (none starts another), and the connection it opens once the pause ends is the store's one connection, serving
     * the calls after them: the server sees one connection of the store, not a leaked one beside a second, and none
     * once the store is closed, after which calls throw {@link IllegalStateException}.
     */
    @Test
    void aConnectionAttemptOutlivingTheStartupTimeoutServesTheCallsAfterItAndIsClosedWithTheStore() {
        try (RedisServer server = RedisServers.start()) {
            RedisClient client = RedisClient.create(server.uri());
            try {
                CounterKey id = new CounterKey("connect", run);
                server.call("CLIENT", "PAUSE", Long.toString(PAUSE_MILLIS));
                RedisCounterStore store = RedisStore.counterStoreBuilder(client)
                        .timeout(TIMEOUT)
                        .startupTimeout(Duration.ofMillis(500))
                        .build();
                for (int call = 0; call < 2; call++) {
                    SluiceException e = assertThrows(
                            SluiceException.class,
                            () -> assertTimeoutPreemptively(HANG, () -> store.load(List.of(id))));
                    assertFalse(causedBy(e, TimeoutException.class), "not by the timeout: " + e);
                    assertTrue(e.getMessage().contains("connecting"), e.getMessage());
                }

                awaitRecovery(store, id);
                assertTrue(store.isConnected());
                assertArrayEquals(
                        new boolean[] {true}, store.compareAndSet(List.of(write(id, CounterSnapshot.ABSENT, 1))));
                assertEquals(1, otherConnections(server), "the store's connections");
                store.close();
                awaitConnections(server, 0);
                assertFalse(store.isConnected());
                IllegalStateException closed = assertThrows(IllegalStateException.class, () -> store.load(List.of(id)));
                assertTrue(closed.getMessage().contains("closed"), closed.getMessage());
            } finally {
                client.shutdown();
            }
        }
    }

    /** Connections to {@code server} other than the one asking ({@code CLIENT LIST}). */
    private static int otherConnections(RedisServer server) {
        String list = (String) server.call("CLIENT", "LIST");
        return (int) list.lines().filter(line -> !line.isBlank()).count() - 1;
    }

    /** Waits (bounded) until the server has dropped the connections a client closed. */
    private static void awaitConnections(RedisServer server, int expected) {
        Await.until(
                expected + " connections to the server besides the test's own",
                RECOVERY,
                () -> otherConnections(server) == expected);
    }

    private static int admitted(RateLimiter limiter, String key, int requests) {
        int n = 0;
        for (int j = 0; j < requests; j++) {
            if (limiter.tryAcquire(key).allowed()) {
                n++;
            }
        }
        return n;
    }

    /** A write of {@code version} frames at 60 µs after the epoch, expiring in an hour of real time. */
    private static CounterWrite write(CounterKey id, long expected, long version) {
        return new CounterWrite(
                id,
                expected,
                version,
                Map.of(60_000L, version),
                (System.currentTimeMillis() + 3_600_000L) * 1_000_000L);
    }

    /** Waits (bounded) until a read succeeds: Lettuce has (re)connected and the server answers. */
    private static void awaitRecovery(RedisCounterStore store, CounterKey id) {
        Await.succeeds("a read answered by Redis", RECOVERY, () -> store.load(List.of(id)));
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c)) {
                return true;
            }
        }
        return false;
    }
}
