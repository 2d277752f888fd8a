package dev.sluice.mongodb;

import dev.sluice.LimiterConfig;
import dev.sluice.spi.StateMachine;
import dev.sluice.spi.StoreDecision;
import java.nio.ByteBuffer;
import java.util.Date;
import java.util.List;
import org.bson.Document;
import org.bson.types.Binary;
import org.jspecify.annotations.Nullable;

/**
 * A key's document as the server returned it: the state after the first {@code seq} requests and the requests since,
 * in the order the server applied them. {@link #replay} runs them through the core state machines. Immutable, but
 * each replay builds states of its own.
 */
final class History {

    static final String SEQ = "seq";
    static final String BASE = "base";
    static final String OPS = "ops";
    static final String AT = "at";
    static final String NOW = "now";

    static final String OP_ID = "i";
    static final String COST = "c";
    static final String LIMIT = "l";
    static final String COUNT_REJECTED = "r";
    static final String TIME = "t";
    static final String GIVE_BACK = "g";
    /** A request's deadline by the server's clock, epoch milliseconds: applied at or after it, it takes nothing. */
    static final String DEADLINE = "d";

    private static final long NANOS_PER_MILLI = 1_000_000;

    final long seq;
    private final long @Nullable [] base; // null: a fresh state
    final List<Document> ops;
    private final @Nullable Document at; // the server's time of each request timed by the store, by OpIds.field(id)

    private History(long seq, long @Nullable [] base, List<Document> ops, @Nullable Document at) {
        this.seq = seq;
        this.base = base;
        this.ops = ops;
        this.at = at;
    }

    /** Reads a key's document; {@code null} (no document) is a key never seen. */
    static History of(@Nullable Document doc) {
        if (doc == null) {
            return new History(0, null, List.of(), null);
        }
        Binary b = doc.get(BASE, Binary.class);
        long[] base = b == null ? null : decode(b);
        Object seq = doc.get(SEQ);
        List<Document> ops = doc.getList(OPS, Document.class, List.of());
        return new History(seq == null ? 0 : number(seq, SEQ), base, ops, doc.get(AT, Document.class));
    }

    /** A state's numbers as stored: big-endian 64-bit integers, one after another, in one binary value. */
    static Binary encode(long[] numbers) {
        ByteBuffer bytes = ByteBuffer.allocate(Long.BYTES * numbers.length);
        bytes.asLongBuffer().put(numbers);
        return new Binary(bytes.array());
    }

    private static long[] decode(Binary b) {
        byte[] bytes = b.getData();
        if (bytes.length % Long.BYTES != 0) {
            throw new IllegalStateException("malformed key document: " + BASE + " holds " + bytes.length + " bytes");
        }
        long[] numbers = new long[bytes.length / Long.BYTES];
        ByteBuffer.wrap(bytes).asLongBuffer().get(numbers);
        return numbers;
    }

    /** The state after the first {@link #seq} requests, as numbers; null for a fresh state. */
    long @Nullable [] base() {
        return base == null ? null : base.clone();
    }

    private static long number(@Nullable Object value, String field) {
        if (!(value instanceof Long || value instanceof Integer)) {
            throw new IllegalStateException("malformed key document: " + field + " holds " + value);
        }
        return ((Number) value).longValue();
    }

    /** The server's time of a document's {@code now} field, set by a peek timed by the store; in nanoseconds. */
    static long nowOf(Document doc) {
        Date now = doc.getDate(NOW);
        if (now == null) {
            throw new IllegalStateException("malformed key document: no " + NOW);
        }
        return Math.multiplyExact(now.toInstant().toEpochMilli(), NANOS_PER_MILLI);
    }

    /** The time of request {@code op}: its own {@code t}, else the server's time recorded for it; nanoseconds. */
    long timeOf(Document op) {
        Object t = op.get(TIME);
        if (t != null) {
            return number(t, TIME);
        }
        Date server = at == null ? null : at.getDate(OpIds.field(id(op)));
        if (server == null) {
            throw new IllegalStateException("malformed key document: request " + op + " has no time");
        }
        return Math.multiplyExact(server.toInstant().toEpochMilli(), NANOS_PER_MILLI);
    }

    static long id(Document op) {
        return number(op.get(OP_ID), OP_ID);
    }

    /** Whether the server's time of request {@code op} is kept in {@code at}. */
    boolean timedByServer(Document op) {
        return op.get(TIME) == null;
    }

    /** Whether the server's time of applying request {@code op} is kept in {@code at} (to time it, or to check it). */
    boolean hasAt(Document op) {
        return op.get(TIME) == null || op.get(DEADLINE) != null;
    }

    /** The server's time of applying request {@code op}, epoch milliseconds. */
    long atMillis(Document op) {
        Date server = at == null ? null : at.getDate(OpIds.field(id(op)));
        if (server == null) {
            throw new IllegalStateException("malformed key document: request " + op + " has no server time");
        }
        return server.toInstant().toEpochMilli();
    }

    /**
     * Whether request {@code op} reached the server past its deadline: then it takes nothing, for every instance that
     * replays it, and its caller, answered by the failure policy, is told nothing else. The server's time is kept in
     * whole milliseconds, rounded down: a request kept at {@code at < d} ran before {@code at + 1 <= d}.
     */
    boolean late(Document op) {
        Object d = op.get(DEADLINE);
        return d != null && atMillis(op) >= number(d, DEADLINE);
    }

    /** The configurations requests were made with: the limiter's own, or another limit or countRejected. */
    interface Configs {
        LimiterConfig own();

        LimiterConfig of(long limit, boolean countRejected);
    }

    /**
     * Replays the history up to and including the request named {@code target}.
     *
     * @throws IllegalStateException if the history holds no such request or is malformed
     */
    Outcome replay(long target, Configs configs) {
        return replay(new long[] {target}, configs)[0];
    }

    /**
     * Replays the history up to and including the last of the requests named {@code targets}, which are in the order
     * they were appended; their outcomes, in that order. The state of each outcome is the state after the last.
     *
     * @throws IllegalStateException if the history holds not every such request, or is malformed
     */
    Outcome[] replay(long[] targets, Configs configs) {
        Outcome[] outcomes = new Outcome[targets.length];
        int next = 0;
        StateMachine state = base == null ? null : StateMachine.restore(configs.own(), base);
        for (int i = 0; i < ops.size() && next < targets.length; i++) {
            Document op = ops.get(i);
            LimiterConfig config =
                    configs.of(number(op.get(LIMIT), LIMIT), Boolean.TRUE.equals(op.get(COUNT_REJECTED)));
            long time = timeOf(op);
            long cost = number(op.get(COST), COST);
            if (state == null) {
                state = StateMachine.fresh(config);
            }
            Object place = op.get(GIVE_BACK);
            StoreDecision decision = null;
            boolean givenBack = false;
            boolean late = late(op);
            if (late) {
                // reached the server past its deadline: takes nothing
            } else if (place == null) {
                decision = state.decide(config, time, cost, true);
            } else {
                givenBack = state.giveBack(config, time, cost, number(place, GIVE_BACK));
            }
            if (id(op) == targets[next]) {
                outcomes[next++] = new Outcome(decision, givenBack, late, i, time, state);
            }
        }
        if (next < targets.length) {
            throw new IllegalStateException("the key document returned does not hold request " + targets[next]);
        }
        return outcomes;
    }

    /** Replays the whole history, then decides a request of {@code cost} at {@code now} without consuming. */
    StoreDecision peek(long now, long cost, Configs configs) {
        if (ops.isEmpty()) {
            StateMachine state =
                    base == null ? StateMachine.fresh(configs.own()) : StateMachine.restore(configs.own(), base);
            return state.decide(configs.own(), now, cost, false);
        }
        StateMachine state = replay(id(ops.get(ops.size() - 1)), configs).state();
        return state.decide(configs.own(), now, cost, false);
    }

    /**
     * What replaying a request gave.
     *
     * @param decision  the decision of a request to decide; null for a give-back, or a request that came late
     * @param givenBack whether a give-back returned any permits
     * @param late      whether the request reached the server past its deadline, and so took nothing
     * @param position  the request's index in {@code ops}
     * @param time      the request's time, nanoseconds
     * @param state     the key's state right after the request
     */
    record Outcome(
            @Nullable StoreDecision decision,
            boolean givenBack,
            boolean late,
            int position,
            long time,
            StateMachine state) {}
}
