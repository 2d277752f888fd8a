package dev.sluice.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * For tests of concurrent decisions: a store on the shared standalone Redis, one on the shared cluster (both as the
 * contract suite configures them), and a fixed set of threads that try a request at the same moment. One per test
 * class, closed after its last test.
 */
final class ContendedRedis {

    private final RedisStore standalone;
    private final RedisStore cluster;
    private final int threadCount;
    private final ExecutorService threads;

    ContendedRedis(int threadCount) {
        this.standalone = RedisContractTest.contractStore(RedisStore.builder(Servers.client()));
        this.cluster = RedisContractTest.contractStore(RedisStore.builder(Servers.clusterClient()));
        this.threadCount = threadCount;
        this.threads = Executors.newFixedThreadPool(threadCount);
    }

    RedisStore standalone() {
        return standalone;
    }

    RedisStore cluster() {
        return cluster;
    }

    /** The store of that name, "standalone" or "cluster": parameterized tests name them, as JUnit closes arguments. */
    RedisStore store(String name) {
        return name.equals("cluster") ? cluster : standalone;
    }

    /** Every thread, started together, runs {@code request} {@code times} times in a row; how many calls passed. */
    int passes(int times, Callable<Boolean> request) throws Exception {
        CyclicBarrier start = new CyclicBarrier(threadCount);
        List<Future<Integer>> counts = new ArrayList<>();
        for (int t = 0; t < threadCount; t++) {
            counts.add(threads.submit(() -> {
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

    void close() throws InterruptedException {
        threads.shutdownNow();
        threads.awaitTermination(10, TimeUnit.SECONDS);
        standalone.close();
        cluster.close();
    }
}
