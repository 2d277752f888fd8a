package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.spi.CounterKey;
import dev.sluice.testkit.Await;
import dev.sluice.testkit.FreshJvm;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cold start of the issue, in separate processes: three JVMs on one real Redis, each a fresh service instance in
 * leased mode, flood one key new to all of them at the same moment (4 threads, 1,500 requests each: 18,000 requests
 * for a limit of 2,000 a day). Synchronized mode let each spend the whole limit (6,000 admitted); leased mode admits
 * at most 2,000, and the store counts exactly what was admitted plus the slices the processes held when they stopped.
 */
class RedisLeasedFreshJvmTest {

    private static final int PROCESSES = 3;
    private static final long LIMIT = 2000;

    @TempDir
    Path dir;

    @Test
    void threeProcessesFloodingAKeyNewToAllOfThemAdmitNoMoreThanTheLimit() throws Exception {
        String key = "leased-cold:" + UUID.randomUUID();
        StartLine processes = StartLine.start(
                dir, PROCESSES, LeasedFlood.class, j -> List.of(key, Long.toString(LIMIT), "4", "1500"));
        processes.go("");
        long admitted = 0;
        long unused = 0;
        for (FreshJvm jvm : processes.jvms()) {
            String line = jvm.await(Await.GENEROUS).get(0);
            admitted += field(line, "admitted");
            unused += field(line, "unused");
        }
        long stored;
        try (RedisCounterStore reader =
                RedisStore.counterStoreBuilder(Servers.client()).build()) {
            stored = reader.load(List.of(new CounterKey("tail:86400000000000", key)))
                    .get(0)
                    .total();
        }
        System.out.println("leased, 3 processes, cold flood: admitted " + admitted + " of " + LIMIT + ", stored "
                + stored + ", held unused when the processes stopped " + unused);
        assertTrue(admitted <= LIMIT, "admitted " + admitted);
        assertEquals(stored, admitted + unused, "the store counts what was admitted plus the slices held");
    }

    private static long field(String line, String name) {
        for (String part : line.split(" ")) {
            if (part.startsWith(name + "=")) {
                return Long.parseLong(part.substring(name.length() + 1));
            }
        }
        throw new AssertionError("no " + name + " in '" + line + "'");
    }
}
