package dev.sluice.lease;

import dev.sluice.Algorithm;
import dev.sluice.SimulatedInstances;
import dev.sluice.memory.InMemoryCounterStore;
import dev.sluice.sync.SynchronizedStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * A deterministic simulation of leased mode beside synchronized mode, as the synchronized mode's own simulation runs
 * it: {@code n} instances in one JVM on one virtual clock over one in-memory counter store, one client limited to
 * {@code limit} per second offering {@code offered} requests per second (one every {@code 1/offered} s), spread over
 * the instances evenly, at random, or skewed (one instance takes 80 %, the others share the rest at random); every
 * {@code interval} a round (leased: every instance's {@link LeasedStore#refresh()}; synchronized: every instance
 * flushes, then every instance refreshes). No threads, no sleeps: the same setup always gives the same result.
 *
 * <p>The algorithm's own measure {@code M} of the admitted traffic comes from {@link SimulatedInstances}' oracle; the
 * limit bounds it: over the limit means {@code M > L} after an admission.
 */
final class LeaseSimulation {

    /** How the requests are spread over the instances. */
    enum Spread {
        EVEN,
        RANDOM,
        SKEWED
    }

    /** The mode under test. */
    enum Mode {
        SYNCHRONIZED,
        LEASED
    }

    /** One run's setup. */
    record Setup(
            Mode mode,
            Algorithm algorithm,
            int instances,
            Duration interval,
            Spread spread,
            boolean cold,
            long limit,
            int offeredPerSecond,
            int seconds,
            long seed) {

        static Setup of(Mode mode, Algorithm algorithm, int instances, Duration interval, Spread spread, long limit) {
            return new Setup(mode, algorithm, instances, interval, spread, false, limit, 500, 20, 3);
        }

        Setup mode(Mode m) {
            return new Setup(m, algorithm, instances, interval, spread, cold, limit, offeredPerSecond, seconds, seed);
        }

        Setup seconds(int s) {
            return new Setup(mode, algorithm, instances, interval, spread, cold, limit, offeredPerSecond, s, seed);
        }

        /** {@code offered} requests per second in place of 500. */
        Setup offered(int offered) {
            return new Setup(mode, algorithm, instances, interval, spread, cold, limit, offered, seconds, seed);
        }

        /** No instance holds the key, and {@code offered} per second flood it from the start. */
        Setup coldFlood(int offered) {
            return new Setup(mode, algorithm, instances, interval, spread, true, limit, offered, seconds, seed);
        }

        @Override
        public String toString() {
            return mode + " " + algorithm + " L=" + limit + ", " + instances + " instances, every "
                    + interval.toMillis() + " ms, " + spread
                    + (cold ? ", cold flood of " + offeredPerSecond + "/s" : "");
        }
    }

    /**
     * One run's outcome.
     *
     * @param perSecond   admitted in each second {@code [s, s+1)} of the run
     * @param peakMeasure the largest value of the algorithm's measure after an admission
     * @param storeCalls  calls to the counter store of all instances
     * @param rounds      rounds run (per instance)
     * @param perInstance admitted by each instance over the run
     */
    record Result(Setup setup, long[] perSecond, long peakMeasure, long storeCalls, long rounds, long[] perInstance)
            implements SimulatedInstances.PerSecond {

        /**
         * Jain's fairness index of what each instance admitted: 1 when all admitted the same, {@code 1/n} when one
         * admitted everything. Meaningful where every instance is asked about the same (the even and random spreads).
         */
        double fairness() {
            double sum = 0;
            double squares = 0;
            for (long a : perInstance) {
                sum += a;
                squares += (double) a * a;
            }
            return squares == 0 ? 1 : sum * sum / (perInstance.length * squares);
        }

        long minPerSecond() {
            long min = Long.MAX_VALUE;
            for (long c : perSecond) {
                min = Math.min(min, c);
            }
            return min;
        }

        /** Calls to the counter store per instance per interval. */
        double callsPerInstancePerInterval() {
            return (double) storeCalls / setup.instances() / Math.max(1, rounds);
        }
    }

    private LeaseSimulation() {}

    static Result run(Setup s) {
        InMemoryCounterStore shared = InMemoryCounterStore.create();
        List<LeasedStore> leased = new ArrayList<>();
        List<SynchronizedStore> synced = new ArrayList<>();
        for (int j = 0; j < s.instances(); j++) {
            if (s.mode() == Mode.LEASED) {
                leased.add(LeasedStore.builder(shared)
                        .interval(s.interval())
                        .manualRounds()
                        .build());
            } else {
                synced.add(SynchronizedStore.builder(shared)
                        .interval(s.interval())
                        .manualRounds()
                        .build());
            }
        }
        SimulatedInstances instances =
                new SimulatedInstances(s.algorithm(), s.limit(), s.mode() == Mode.LEASED ? leased : synced, s.cold());
        long step = 1_000_000_000L / s.offeredPerSecond();
        long interval = s.interval().toNanos();
        long end = (long) s.seconds() * 1_000_000_000L;
        long[] perSecond = new long[s.seconds()];
        long[] perInstance = new long[s.instances()];
        Random random = new Random(s.seed());
        long peak = 0;
        long nextRound = interval;
        long rounds = 0;
        int request = 0;
        long callsBefore = calls(leased, synced);
        for (long t = step / 2; t < end; t += step, request++) {
            while (nextRound <= t) {
                instances.at(nextRound);
                for (LeasedStore l : leased) {
                    l.refresh();
                }
                for (SynchronizedStore y : synced) {
                    y.flush();
                }
                for (SynchronizedStore y : synced) {
                    y.refresh();
                }
                rounds++;
                nextRound += interval;
            }
            instances.at(t);
            int j = instance(s, request, random);
            long measure = instances.request(j);
            if (measure >= 0) {
                perSecond[(int) (t / 1_000_000_000L)]++;
                perInstance[j]++;
                peak = Math.max(peak, measure);
            }
        }
        return new Result(s, perSecond, peak, calls(leased, synced) - callsBefore, rounds, perInstance);
    }

    private static int instance(Setup s, int request, Random random) {
        switch (s.spread()) {
            case EVEN:
                return request % s.instances();
            case RANDOM:
                return random.nextInt(s.instances());
            default:
                return random.nextInt(10) < 8 ? 0 : 1 + random.nextInt(s.instances() - 1);
        }
    }

    private static long calls(List<LeasedStore> leased, List<SynchronizedStore> synced) {
        long n = 0;
        for (LeasedStore l : leased) {
            n += l.stats().storeCalls();
        }
        for (SynchronizedStore y : synced) {
            n += y.stats().storeCalls();
        }
        return n;
    }
}
