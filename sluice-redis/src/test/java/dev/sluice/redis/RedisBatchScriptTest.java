package dev.sluice.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Algorithm;
import io.lettuce.core.ScriptOutputType;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code batch.lua} run directly ({@code EVAL} of {@link LuaScript#BATCH}), with arguments written by hand: what a
 * batch decides is what the same requests decide sent one by one, whatever else the batch holds.
 */
class RedisBatchScriptTest {

    /** A microsecond time well after the epoch, the first request's; each next one comes 7 ms later. */
    private static final long START = 1_790_000_000_000_000L;

    /** The limit of the batches of {@link #aKeyDecidedManyTimesInOneBatchEndsAsIfDecidedOneByOne}: some are denied. */
    private static final int LIMIT = 12;

    private static final int REQUESTS = 20;

    static List<Arguments> algorithms() {
        List<Arguments> all = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            for (boolean countRejected : new boolean[] {false, true}) {
                for (boolean joint : new boolean[] {false, true}) {
                    all.add(Arguments.of(algorithm, countRejected, joint));
                }
            }
        }
        return all;
    }

    /**
     * A key decided twenty times in one batch (some allowed, some denied, costs 1 to 3) answers each request as it
     * is answered in twenty batches of one, and is left with the same state and the same expiry: a batch reads and
     * writes a key's state once, whatever number of its requests decide it.
     */
    @ParameterizedTest(name = "{0}, countRejected {1}, joint {2}")
    @MethodSource("algorithms")
    void aKeyDecidedManyTimesInOneBatchEndsAsIfDecidedOneByOne(
            Algorithm algorithm, boolean countRejected, boolean joint) {
        String together = "batch-script:" + UUID.randomUUID();
        String alone = "batch-script:" + UUID.randomUUID();
        Batch batch = new Batch(algorithm, countRejected);
        for (int i = 0; i < REQUESTS; i++) {
            batch.request(together, cost(i), START + 7_000L * i, 0, joint);
        }
        List<Long> inOne = batch.run();

        List<Long> oneByOne = new ArrayList<>(List.of(inOne.get(0)));
        for (int i = 0; i < REQUESTS; i++) {
            List<Long> answer = new Batch(algorithm, countRejected)
                    .request(alone, cost(i), START + 7_000L * i, 0, joint)
                    .run();
            oneByOne.addAll(answer.subList(1, answer.size()));
        }

        assertEquals(oneByOne.subList(1, oneByOne.size()), inOne.subList(1, inOne.size()));
        assertTrue(inOne.contains(0L), "some requests were denied: " + inOne);
        assertEquals(state(alone), state(together));
        long ttlAlone = Servers.redis().pttl(alone);
        long ttlTogether = Servers.redis().pttl(together);
        assertTrue(
                Math.abs(ttlAlone - ttlTogether) < 5_000,
                "expiries " + ttlTogether + " ms (one batch) and " + ttlAlone + " ms (one by one)");
    }

    /**
     * Requests at one instant on a key that runs out (a hot key over its limit): runs of the same request refused one
     * after another, single and joint, broken by another cost, another key and a joint request that takes from the
     * key, answer as each request alone, and leave the same states. A request refused without taking anything changes
     * nothing, so the batch answers the same request right after it as it answered that one; anything that may have
     * changed the keys in between ends the run.
     */
    @ParameterizedTest(name = "{0}, countRejected {1}, joint {2}")
    @MethodSource("algorithms")
    void theSameRequestRefusedAgainAtTheSameInstantAnswersAsAlone(
            Algorithm algorithm, boolean countRejected, boolean joint) {
        String id = UUID.randomUUID().toString();
        String[] together = {"batch-script:hot:" + id, "batch-script:other:" + id, "batch-script:spare:" + id};
        String[] alone = {
            "batch-script:hot-alone:" + id, "batch-script:other-alone:" + id, "batch-script:spare-alone:" + id
        };
        // {key (0 hot, 1 other, 2 spare; or -j for the joint request JOINTS[j - 1]), cost, its time after START in
        // microseconds, a joint request's second part's time after its first's}; limit 12, as a fixed window reads it
        int[][] requests = {
            {-1, 1, 0, 0}, // the joint request over hot and other takes
            {-1, 1, 0, 0}, // and again: a request that takes is decided again
            {0, 5, 0, 0}, // hot: 7 taken
            {0, 3, 0, 0}, // 10
            {0, 3, 0, 0}, // refused
            {0, 3, 0, 0}, // refused again: answered as the one before
            {-1, 1, 0, 0}, // the joint request takes: hot 11
            {0, 3, 0, 0}, // refused, with one less left
            {0, 3, 0, 0}, // again
            {0, 1, 0, 0}, // hot 12
            {-1, 1, 0, 0}, // the joint request refused
            {-1, 1, 0, 0}, // again
            {0, 2, 0, 0}, // refused alone
            {-1, 2, 0, 0}, // then in a joint request: the same first part, one part more
            {1, 3, 0, 0}, // other takes 3
            {-1, 2, 0, 0}, // the joint request refused
            {-1, 2, 0, 0}, // again
            {-1, 2, 0, 1_000}, // its second part a millisecond later
            {-2, 2, 0, 0}, // the same first part, another second: hot and spare
            {1, 20, 0, 0}, // refused on other
            {1, 20, 0, 0}, // again
            {0, 20, 0, 0}, // on hot: other numbers
            {0, 1, 0, 0}, // refused on hot
            {0, 1, 1_000, 0}, // a millisecond later: other times
            {-3, 1, 0, 0}, // spare and hot, refused by hot (spare has room)
            {2, 1, 0, 0} // then spare alone: the same first part, taken
        };
        Batch batch = new Batch(algorithm, countRejected);
        for (int[] r : requests) {
            add(batch, together, r, joint);
        }
        List<Long> inOne = batch.run();

        List<Long> oneByOne = new ArrayList<>();
        for (int[] r : requests) {
            List<Long> answer =
                    add(new Batch(algorithm, countRejected), alone, r, joint).run();
            oneByOne.addAll(answer.subList(1, answer.size()));
        }

        assertEquals(oneByOne, inOne.subList(1, inOne.size()));
        assertTrue(oneByOne.stream().filter(v -> v == 0L).count() >= 10, "most requests were refused: " + oneByOne);
        for (int i = 0; i < together.length; i++) {
            assertEquals(state(alone[i]), state(together[i]));
        }
    }

    /** The keys of each joint request of {@link #theSameRequestRefusedAgainAtTheSameInstantAnswersAsAlone}. */
    private static final int[][] JOINTS = {{0, 1}, {0, 2}, {2, 0}};

    /**
     * Adds {@code request} ({key index, or -j for the joint request {@code JOINTS[j - 1]}; cost; its time after
     * {@link #START} in microseconds; a joint request's second part's time after its first's}).
     */
    private static Batch add(Batch batch, String[] keys, int[] request, boolean joint) {
        long now = START + request[2];
        if (request[0] >= 0) {
            return batch.request(keys[request[0]], request[1], now, 0, joint);
        }
        int[] parts = JOINTS[-request[0] - 1];
        long second = now + request[3];
        return batch.requestJoint(
                new String[] {keys[parts[0]], keys[parts[1]]}, request[1], new long[] {now, second}, 0);
    }

    /**
     * A joint request of one part that does not count rejections answers as the single request of that part: the
     * same decision (all or nothing over one part is that part's), the same numbers. This is what
     * {@link dev.sluice.spi.AtomicJointDecider#answersAsSingle} states, by which the store sends such a request as that
     * single one.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Algorithm.class)
    void aJointRequestOfOnePartAnswersAsItsSingleRequest(Algorithm algorithm) {
        String jointKey = "batch-script:" + UUID.randomUUID();
        String singleKey = "batch-script:" + UUID.randomUUID();
        Batch joint = new Batch(algorithm, false);
        Batch single = new Batch(algorithm, false);
        for (int i = 0; i < REQUESTS; i++) {
            joint.request(jointKey, cost(i), START + 7_000L * i, 0, true);
            single.request(singleKey, cost(i), START + 7_000L * i, 0, false);
        }
        List<Long> jointAnswers = joint.run();
        List<Long> singleAnswers = single.run();
        assertEquals(singleAnswers.subList(1, singleAnswers.size()), jointAnswers.subList(1, jointAnswers.size()));
        assertEquals(state(singleKey), state(jointKey));
    }

    /**
     * A request past its deadline (by the server's clock) is answered {@code 0} and takes nothing, and the requests
     * after it in the batch are read from their own arguments: each decided on its own key at its own cost.
     */
    @Test
    void aRequestPastItsDeadlineLeavesTheOnesAfterItTheirOwnArguments() {
        String late = "batch-script:" + UUID.randomUUID();
        String joint = "batch-script:" + UUID.randomUUID();
        String inTime = "batch-script:" + UUID.randomUUID();
        List<Long> answer = new Batch(Algorithm.FIXED_WINDOW, false)
                .request(late, 3, START, 1, false)
                .requestJoint(new String[] {late, joint}, 2, START, 1)
                .request(inTime, 2, START, 0, false)
                .request(joint, 4, START, Long.MAX_VALUE / 1024, false)
                .run();
        // the server's time; 0 for each late one; 1 and five integers for each in time
        assertEquals(1 + 1 + 1 + 6 + 6, answer.size(), "answer: " + answer);
        assertEquals(List.of(0L, 0L, 1L, 1L, (long) LIMIT - 2), answer.subList(1, 6));
        assertEquals(List.of(1L, 1L, (long) LIMIT - 4), answer.subList(9, 12));
        assertNull(state(late), "the late request took nothing");
        assertEquals(List.of(START / 60_000_000L, 2L), state(inTime));
        assertEquals(List.of(START / 60_000_000L, 4L), state(joint));
    }

    private static int cost(int i) {
        return 1 + i % 3;
    }

    /** A key's state: a string's packed numbers, a hash's fields and values (sorted), or null if there is none. */
    private static List<?> state(String key) {
        String type = Servers.redis().type(key);
        switch (type) {
            case "none":
                return null;
            case "string":
                return Arrays.stream(Servers.packedState(key)).boxed().toList();
            case "hash":
                return Servers.redis().hgetall(key).entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .sorted()
                        .toList();
            default:
                throw new AssertionError(key + " is a " + type);
        }
    }

    /**
     * The arguments of one run of {@code batch.lua} over one limiter (limit {@link #LIMIT}, window a minute, a
     * sub-window of 6 s for the sliding-window counter).
     */
    private static final class Batch {
        private final List<String> keys = new ArrayList<>();
        private final List<String> requests = new ArrayList<>();
        private final List<String> limiter;
        private int count;

        Batch(Algorithm algorithm, boolean countRejected) {
            String subWindow = algorithm == Algorithm.SLIDING_WINDOW_COUNTER ? "6000000" : "0";
            limiter = List.of(
                    algorithm.code(),
                    Integer.toString(LIMIT),
                    "60000000",
                    countRejected ? "1" : "0",
                    "1000",
                    subWindow,
                    "0");
        }

        /** A request of one part; {@code deadline} in microseconds by the server's clock, 0 for none. */
        Batch request(String key, long cost, long now, long deadline, boolean joint) {
            keys.add(key);
            requests.addAll(
                    List.of(Long.toString(deadline), joint ? "-1" : "1", "1", Long.toString(cost), Long.toString(now)));
            count++;
            return this;
        }

        /** A joint request over {@code parts}, each of {@code cost}. */
        Batch requestJoint(String[] parts, long cost, long now, long deadline) {
            long[] nows = new long[parts.length];
            Arrays.fill(nows, now);
            return requestJoint(parts, cost, nows, deadline);
        }

        /** A joint request over {@code parts}, each of {@code cost}, each at its time in {@code nows}. */
        Batch requestJoint(String[] parts, long cost, long[] nows, long deadline) {
            requests.add(Long.toString(deadline));
            requests.add(Integer.toString(-parts.length));
            for (int i = 0; i < parts.length; i++) {
                keys.add(parts[i]);
                requests.addAll(List.of("1", Long.toString(cost), Long.toString(nows[i])));
            }
            count++;
            return this;
        }

        List<Long> run() {
            List<String> args = new ArrayList<>();
            args.add("1");
            args.addAll(limiter);
            args.add(Integer.toString(count));
            args.addAll(requests);
            List<Object> answer = Servers.redis()
                    .eval(
                            LuaScript.BATCH.text(),
                            ScriptOutputType.MULTI,
                            keys.toArray(new String[0]),
                            args.toArray(new String[0]));
            return answer.stream().map(Long.class::cast).toList();
        }
    }
}
