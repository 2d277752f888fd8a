package dev.sluice.server.replay;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * Writes an Allegro-like log of OAuth token requests as JSON lines for {@code replay}: an hour (by default) of traffic
 * to the token endpoint, epoch milliseconds, in the built-in example's domain {@code oauth-token}.
 *
 * <ul>
 *   <li>{@value #CLIENTS} clients whose popularity falls off as a power law; 70 % of requests are
 *       {@code client_credentials} ({@code [client_id]}), the rest user grants ({@code [client_id, username]}) of
 *       {@value #USERS} users, each of whom signs in through one of the {@value #USER_CLIENTS} busiest clients;
 *   <li>two trusted clients ({@code trusted-backend}, {@code mobile-app}) with a tenth of the traffic;
 *   <li>token storms: {@value #STORMS} clients ({@code storm-N}) that each fire a burst of 150 requests a second for
 *       20 s, spread over the hour, and one user ({@code storm-1}, {@code bob}) retrying a refresh in a loop;
 *   <li>lines from several machines: one in twenty is written up to 40 ms late (out of order).
 * </ul>
 *
 * <p>Deterministic for a seed. {@code java -cp sluice-server/target/test-classes:sluice-server/target/sluice-server.jar
 * dev.sluice.server.replay.TokenLog LINES FILE [SECONDS] [SEED]}.
 */
public final class TokenLog {
    static final int CLIENTS = 5000;
    static final int USERS = 20_000;
    static final int USER_CLIENTS = 50;
    static final int STORMS = 5;
    static final long START = 1_795_780_800_000L; // 2026-11-27T12:00:00Z

    private TokenLog() {}

    public static void main(String[] args) throws IOException {
        long lines = Long.parseLong(args[0]);
        Path out = Path.of(args[1]);
        int seconds = args.length > 2 ? Integer.parseInt(args[2]) : 3600;
        long seed = args.length > 3 ? Long.parseLong(args[3]) : 33;
        write(out, lines, seconds, seed);
    }

    /** Writes {@code lines} requests over {@code seconds} to {@code file}. */
    public static void write(Path file, long lines, int seconds, long seed) throws IOException {
        try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
            write(out, lines, seconds, seed);
        }
    }

    static void write(OutputStream out, long lines, int seconds, long seed) throws IOException {
        Random random = new Random(seed);
        String[] names = new String[CLIENTS];
        double[] cumulative = new double[CLIENTS];
        double sum = 0;
        for (int i = 0; i < CLIENTS; i++) {
            sum += 1 / Math.pow(i + 1, 1.1);
            cumulative[i] = sum;
            names[i] = String.format(java.util.Locale.ROOT, "client-%04d", i);
        }
        long span = seconds * 1000L;
        long[] stormStart = new long[STORMS];
        for (int s = 0; s < STORMS; s++) {
            stormStart[s] = START + (span * (2L * s + 1)) / (2L * STORMS) - 10_000;
        }
        StringBuilder b = new StringBuilder(256);
        byte[] buf = new byte[512];
        for (long i = 0; i < lines; i++) {
            long time = START + (long) ((double) i / lines * span);
            if (random.nextInt(20) == 0) {
                time += random.nextInt(40); // written late by another machine
            }
            String client;
            String user = null;
            int storm = -1;
            for (int s = 0; s < STORMS; s++) {
                if (time >= stormStart[s] && time < stormStart[s] + 20_000) {
                    storm = s;
                }
            }
            // a storm's 150/s against the average rate
            double stormShare = storm < 0 ? 0 : Math.min(0.9, 150.0 / Math.max(1, lines / (double) seconds));
            int kind = random.nextInt(1000);
            if (storm >= 0 && random.nextDouble() < stormShare) {
                client = "storm-" + (storm + 1);
                if (storm == 0 && random.nextBoolean()) {
                    user = "bob";
                }
            } else if (kind < 60) {
                client = "trusted-backend";
            } else if (kind < 100) {
                client = "mobile-app";
                user = "user-" + random.nextInt(USERS);
            } else {
                double x = random.nextDouble() * sum;
                int lo = 0;
                int hi = CLIENTS - 1;
                while (lo < hi) {
                    int mid = (lo + hi) >>> 1;
                    if (cumulative[mid] < x) {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                client = names[lo];
                if (random.nextInt(10) < 3) {
                    int u = random.nextInt(USERS);
                    user = "user-" + u;
                    client = names[u % USER_CLIENTS];
                }
            }
            b.setLength(0);
            b.append("{\"time\":")
                    .append(time)
                    .append(",\"domain\":\"oauth-token\",\"descriptors\":[{\"entries\":[{\"key\":\"client_id\",")
                    .append("\"value\":\"")
                    .append(client)
                    .append('"');
            if (user != null) {
                b.append("},{\"key\":\"username\",\"value\":\"").append(user).append('"');
            }
            b.append("}]}]}\n");
            int n = b.length();
            if (n > buf.length) {
                buf = new byte[2 * n];
            }
            for (int k = 0; k < n; k++) {
                buf[k] = (byte) b.charAt(k); // ASCII only
            }
            out.write(buf, 0, n);
        }
        out.flush();
    }
}
