package dev.sluice.sync;

import dev.sluice.Algorithm;
import dev.sluice.SimulatedInstances;
import dev.sluice.memory.InMemoryCounterStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * A deterministic simulation of synchronized mode: {@code n} instances in one JVM on one virtual clock, one client
 * limited to {@code limit} per second offering {@code offered} requests per second (one every {@code 1/offered} s),
 * spread over the instances round-robin or at random, and every {@code interval} a sync round: every instance flushes,
 * then every instance refreshes. Every instance holds the client's key from the start (it has served the client
 * before), unless the setup is a cold start. No threads, no sleeps; the same setup always gives the same result.
 *
 * <p>The algorithm's own measure {@code M} of the admitted traffic comes from {@link SimulatedInstances}' oracle.
 *
 * <p>The bound. After a round every instance that holds the key has read the store's record, which is everything
 * admitted so far. Until the
 * next round instance {@code j} admits {@code a_j} more, each time within the limit on the record plus its own
 * {@code a_j}. The measure is monotone and grows by at most a request's cost per request added, so at the moment of
 * any admission {@code M ≤ L + Σa − max a}: the limit, plus what the other instances admitted since the round (taking
 * as "this" instance the one that admitted most). With the traffic offered in one interval {@code R·T}, spread over
 * {@code n} instances, {@code Σa − max a ≤ ⌊R·T·(n−1)/n⌋}, and never more than {@code (n−1)·L}.
 */
final class SyncSimulation {

    /** One run's setup. */
    record Setup(
            Algorithm algorithm,
            int instances,
            Duration interval,
            boolean randomSpread,
            boolean cold,
            long limit,
            int offeredPerSecond,
            int seconds,
            long seed) {

        static Setup of(Algorithm algorithm, int instances, Duration interval) {
            return new Setup(algorithm, instances, interval, false, false, 50, 500, 20, 1);
        }

        /** The requests go to instances at random. */
        Setup randomly(long seed) {
            return new Setup(algorithm, instances, interval, true, cold, limit, offeredPerSecond, seconds, seed);
        }

        /** No instance holds the client's key at the start: each takes it up with its first request. */
        Setup coldStart() {
            return new Setup(
                    algorithm, instances, interval, randomSpread, true, limit, offeredPerSecond, seconds, seed);
        }

        /** {@code L + min(⌊R·T·(n−1)/n⌋, (n−1)·L)}: what the measure never exceeds. */
        long bound() {
            long perInterval = offeredPerSecond * interval.toNanos() / 1_000_000_000L;
            return limit + Math.min(perInterval * (instances - 1) / instances, (long) (instances - 1) * limit);
        }

        @Override
        public String toString() {
            return algorithm + ", " + instances + " instances, sync every " + interval.toMillis() + " ms, "
                    + (randomSpread ? "random spread (seed " + seed + ")" : "even spread")
                    + (cold ? ", cold start" : "");
        }
    }

    /**
     * One run's outcome.
     *
     * @param perSecond     admitted in each second {@code [s, s+1)} of the run
     * @param peakMeasure   the largest value of the algorithm's measure over the run
     * @param worstSlack    the least of {@code L + Σa − max a − M} over all admissions (never negative if the bound holds)
     * @param conflicts     write conflicts over all instances
     */
    record Result(Setup setup, long[] perSecond, long peakMeasure, long worstSlack, long conflicts)
            implements SimulatedInstances.PerSecond {}

    private SyncSimulation() {}

    static Result run(Setup s) {
        InMemoryCounterStore shared = InMemoryCounterStore.create();
        List<SynchronizedStore> stores = new ArrayList<>();
        for (int j = 0; j < s.instances(); j++) {
            stores.add(SynchronizedStore.builder(shared).manualRounds().build());
        }
        SimulatedInstances instances = new SimulatedInstances(s.algorithm(), s.limit(), stores, s.cold());
        long step = 1_000_000_000L / s.offeredPerSecond();
        long interval = s.interval().toNanos();
        long end = (long) s.seconds() * 1_000_000_000L;
        long[] perSecond = new long[s.seconds()];
        long[] sinceRound = new long[s.instances()];
        Random random = new Random(s.seed());
        long peak = 0;
        long worstSlack = Long.MAX_VALUE;
        long nextRound = interval;
        int request = 0;
        // requests at step/2, 3·step/2, ...: never at the instant of a round
        for (long t = step / 2; t < end; t += step, request++) {
            while (nextRound <= t) {
                instances.at(nextRound);
                for (SynchronizedStore store : stores) {
                    store.flush();
                }
                for (SynchronizedStore store : stores) {
                    store.refresh();
                }
                Arrays.fill(sinceRound, 0);
                nextRound += interval;
            }
            instances.at(t);
            int j = s.randomSpread() ? random.nextInt(s.instances()) : request % s.instances();
            long measure = instances.request(j);
            if (measure >= 0) {
                sinceRound[j]++;
                perSecond[(int) (t / 1_000_000_000L)]++;
                peak = Math.max(peak, measure);
                long sum = 0;
                long max = 0;
                for (long a : sinceRound) {
                    sum += a;
                    max = Math.max(max, a);
                }
                worstSlack = Math.min(worstSlack, s.limit() + sum - max - measure);
            }
        }
        long conflicts = 0;
        for (SynchronizedStore store : stores) {
            conflicts += store.stats().conflicts();
        }
        return new Result(s, perSecond, peak, worstSlack, conflicts);
    }
}
