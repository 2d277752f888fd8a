package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.LogCapture;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The connection a store waits for at start. */
class ConnectorTest {

    /**
     * A connection made within the wait is reported as made, even when the connection attempt's own waiters wake
     * before its outcome is recorded. The recording is held here until the waiting thread has either returned or is
     * blocked: a wait on the attempt alone returned "not connected" (and logged a false warning) in that window.
     */
    @Test
    void aConnectionMadeWithinTheWaitIsReportedAsMade() throws Exception {
        AtomicReference<Thread> waiter = new AtomicReference<>();
        AtomicBoolean connected = new AtomicBoolean();
        List<String> warnings;
        try (LogCapture log = LogCapture.start()) {
            Connector<StatefulRedisConnection<String, String>> connector = new Connector<>(
                    () -> CompletableFuture.supplyAsync(() -> Servers.client().connect(StringCodec.UTF8)),
                    c -> {
                        Await.until("the waiter returned or blocked", Await.GENEROUS, () -> {
                            Thread.State state = waiter.get().getState();
                            return state == Thread.State.TERMINATED || state == Thread.State.TIMED_WAITING;
                        });
                        return c.async();
                    },
                    "Redis",
                    false);
            try {
                Thread t = new Thread(() -> connected.set(connector.awaitConnected(Duration.ofSeconds(60))));
                waiter.set(t);
                t.start();
                t.join();
                assertTrue(connected.get(), "connected within the wait");
                assertTrue(connector.connected());
            } finally {
                connector.close();
            }
            warnings = log.messagesContaining("not connected");
        }
        assertEquals(List.of(), warnings, "no warning of a connection that was made");
    }
}
