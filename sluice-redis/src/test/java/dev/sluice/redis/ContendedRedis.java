package dev.sluice.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * For tests of concurrent decisions: a store on the shared standalone Redis, one on the shared cluster (both as the
 * contract suite configures them), and a fixed set of threads that try a request at the same moment. A test class
 * registers one as a static extension ({@code @RegisterExtension static final ContendedRedis shared = ...}): the stores
 * and threads are opened before its first test and closed after its last.
 */
final class ContendedRedis implements BeforeAllCallback, AfterAllCallback {

    private final int threadCount;
    private @Nullable RedisStore standalone;
    private @Nullable RedisStore cluster;
    private @Nullable ExecutorService threads;

    ContendedRedis(int threadCount) {
        this.threadCount = threadCount;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        standalone = RedisContractTest.contractStore(RedisStore.builder(Servers.client()));
        cluster = RedisContractTest.contractStore(RedisStore.builder(Servers.clusterClient()));
        threads = Executors.newFixedThreadPool(threadCount);
    }

    @Override
    public void afterAll(ExtensionContext context) throws InterruptedException {
        opened(threads).shutdownNow();
        opened(threads).awaitTermination(10, TimeUnit.SECONDS);
        opened(standalone).close();
        opened(cluster).close();
    }

    RedisStore standalone() {
        return opened(standalone);
    }

    RedisStore cluster() {
        return opened(cluster);
    }

    /** The store of that name, "standalone" or "cluster": parameterized tests name them, as JUnit closes arguments. */
    RedisStore store(String name) {
        return name.equals("cluster") ? cluster() : standalone();
    }

    /** Every thread, started together, runs {@code request} {@code times} times in a row; how many calls passed. */
    int passes(int times, Callable<Boolean> request) throws Exception {
        CyclicBarrier start = new CyclicBarrier(threadCount);
        List<Future<Integer>> counts = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            counts.add(opened(threads).submit(() -> {
                start.await(30, TimeUnit.SECONDS);
                int passed = 0;
                for (int i = 0; i < times; i++) {
                    passed += request.call() ? 1 : 0;
                }
                return passed;
            }));
        }
        int total = 0;
        for (Future<Integer> c : counts) {
            total += c.get(2, TimeUnit.MINUTES);
        }
        return total;
    }

    private static <T> T opened(@Nullable T resource) {
        if (resource == null) {
            throw new IllegalStateException(
                    "not opened: register ContendedRedis with @RegisterExtension on a static field");
        }
        return resource;
    }
}
