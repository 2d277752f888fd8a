package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code serve}'s gRPC bounds: what each option sets, its default, and each value grpc-java would change refused. */
class GrpcOptionsTest {
    static SluiceServer.GrpcLimits limits(String... args) {
        return ServeCommand.grpcLimits(Options.parse("serve", List.of(args), ServeCommand.VALUED, ServeCommand.FLAGS));
    }

    static String refusal(String... args) {
        return assertThrows(UsageException.class, () -> limits(args)).getMessage();
    }

    @Test
    void defaults() {
        SluiceServer.GrpcLimits d = limits();
        assertEquals(SluiceServer.GrpcLimits.DEFAULTS, d);
        assertEquals(100, d.maxStreams());
        assertEquals(1000, d.maxQueue());
        assertEquals(10_000, d.maxCalls());
        assertEquals(GrpcConnections.defaultMax(100), d.maxConnections());
        assertEquals(Duration.ofMinutes(5), d.idleTimeout());
        assertEquals(Duration.ofMinutes(1), d.keepAliveTime());
        assertEquals(Duration.ofSeconds(20), d.keepAliveTimeout());
        assertEquals(Duration.ofSeconds(10), d.readTimeout());
    }

    @Test
    void eachOptionSetsItsBound() {
        SluiceServer.GrpcLimits l = limits(
                "--grpc-max-calls", "7",
                "--grpc-max-connections", "3",
                "--grpc-idle-timeout", "1s",
                "--grpc-keepalive-time", "10s",
                "--grpc-keepalive-timeout", "50ms",
                "--grpc-read-timeout", "100ms");
        assertEquals(7, l.maxCalls());
        assertEquals(3, l.maxConnections());
        assertEquals(Duration.ofSeconds(1), l.idleTimeout());
        assertEquals(Duration.ofSeconds(10), l.keepAliveTime());
        assertEquals(Duration.ofMillis(50), l.keepAliveTimeout());
        assertEquals(Duration.ofMillis(100), l.readTimeout());
        assertEquals(Duration.ofHours(1), limits("--grpc-read-timeout", "60m").readTimeout());
    }

    @Test
    void aReadTimeoutOutsideItsRangeIsRefusedByName() {
        for (String bad : List.of("99ms", "61m", "2h")) {
            assertEquals(
                    "serve: --grpc-read-timeout '" + bad + "' is not valid: expected a duration from 100ms to 1h",
                    refusal("--grpc-read-timeout", bad));
        }
        for (String nonsense : List.of("0s", "-1s", "10", "ten seconds", "")) {
            assertEquals(
                    "serve: --grpc-read-timeout '" + nonsense
                            + "' is not valid: expected a positive duration such as 100ms, 1s, 5m or 1h",
                    refusal("--grpc-read-timeout", nonsense));
        }
    }

    @Test
    void theDefaultConnectionsFollowTheStreamsOfEach() {
        long half = Runtime.getRuntime().maxMemory() / 2;
        assertEquals(Math.max(16, half / (1000 * 2048)), GrpcConnections.defaultMax(1000));
        assertEquals(
                Math.max(16, half / (100 * 2048)),
                limits("--grpc-max-streams", "100").maxConnections());
    }

    @Test
    void valuesGrpcJavaWouldRaiseAreRefusedByName() {
        assertEquals(
                "serve: --grpc-keepalive-time '9s' is not valid: expected a duration of at least 10s",
                refusal("--grpc-keepalive-time", "9s"));
        assertEquals(
                "serve: --grpc-idle-timeout '999ms' is not valid: expected a duration of at least 1s",
                refusal("--grpc-idle-timeout", "999ms"));
        assertEquals(
                "serve: --grpc-max-calls '0' is not valid: expected a whole number from 1 to 2147483647",
                refusal("--grpc-max-calls", "0"));
    }
}
