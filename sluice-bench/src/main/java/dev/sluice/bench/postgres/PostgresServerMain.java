package dev.sluice.bench.postgres;

import dev.sluice.testkit.server.PostgresServers;
import java.io.IOException;

/**
 * Starts one embedded PostgreSQL for a whole benchmark run, prints its JDBC URL on the first line of standard output,
 * and stops it when standard input closes. run-postgres.sh hands the URL to every benchmark fork as
 * {@code SLUICE_POSTGRES_URL}, so Sluice and Bucket4j run on the same server.
 */
public final class PostgresServerMain {

    private PostgresServerMain() {}

    public static void main(String[] args) throws IOException {
        try (PostgresServers.Own server = PostgresServers.startOwn()) {
            System.out.println(server.url());
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the end of input
            }
        }
    }
}
