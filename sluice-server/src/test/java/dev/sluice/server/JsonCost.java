package dev.sluice.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Locale;

/**
 * What reading a {@code POST /json} body and printing its answer cost, in CPU time of this thread, with
 * {@code JsonFormat} and with {@link RequestJson} and {@link ResponseJson}: the usual body (one descriptor of one
 * entry) and the README's answer, 300,000 of each per round, the best of ten rounds after three. Not a test.
 *
 * <p>{@code java -cp sluice-server/target/test-classes:sluice-server/target/sluice-server.jar
 * dev.sluice.server.JsonCost}
 */
public final class JsonCost {
    private static final int PER_ROUND = 300_000;

    private static volatile Object sink;

    private JsonCost() {}

    public static void main(String[] args) throws InvalidProtocolBufferException {
        String body = "{\"domain\":\"oauth-token\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\","
                + "\"value\":\"client-1234\"}]}]}";
        RateLimitResponse answer = ResponseJsonTest.readmeAnswer();
        JsonFormat.Parser parser = JsonFormat.parser();
        JsonFormat.Printer printer = JsonFormat.printer().omittingInsignificantWhitespace();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double[] best = {Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE, Double.MAX_VALUE};
        for (int round = -3; round < 10; round++) {
            long t0 = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < PER_ROUND; i++) {
                RateLimitRequest.Builder b = RateLimitRequest.newBuilder();
                parser.merge(body, b);
                sink = b.build();
            }
            long t1 = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < PER_ROUND; i++) {
                sink = RequestJson.parse(body);
            }
            long t2 = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < PER_ROUND; i++) {
                sink = printer.print(answer);
            }
            long t3 = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < PER_ROUND; i++) {
                sink = ResponseJson.print(answer);
            }
            long t4 = threads.getCurrentThreadCpuTime();
            if (round >= 0) {
                long[] t = {t0, t1, t2, t3, t4};
                for (int k = 0; k < 4; k++) {
                    best[k] = Math.min(best[k], (t[k + 1] - t[k]) / (double) PER_ROUND);
                }
            }
        }
        System.out.printf(
                Locale.ROOT,
                "read the body: JsonFormat %.0f ns, RequestJson %.0f ns; print the answer: JsonFormat %.0f ns,"
                        + " ResponseJson %.0f ns%n",
                best[0],
                best[1],
                best[2],
                best[3]);
    }
}
