package dev.sluice.postgres;

import dev.sluice.SluiceException;
import dev.sluice.spi.AtomicDecider;
import dev.sluice.spi.GroupCommit;
import dev.sluice.spi.ServerClock;
import dev.sluice.spi.StoreDecision;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * The consuming decisions of a {@link PostgresStore}, single and joint, sent together: while one call is in flight,
 * the requests that arrive wait, and go together in the next, as one call of {@code <table>_decide_batch} (group
 * commit, {@link GroupCommit}: its class comment tells how and why, deadlines included). Thread-safe.
 *
 * <p>The function decides the requests one after the other in the order they arrived, inside one transaction, each
 * exactly as its own call would (a joint one all or nothing), so batching changes no decision. It locks the batch's
 * rows in id order before deciding (two instances' batches never deadlock), reads and writes each row once however
 * many requests it serves, and commits once: on a hot key 64 decisions cost about what one did.
 *
 * <p>Who sends. A request that finds no call in flight is sent at once on its caller's thread, as a batch of one: no
 * thread hop, no added latency. A batch that follows one in flight is sent by a thread of the store's own (daemon
 * threads, made as needed and ended after a minute idle), so no caller, its answer in hand, waits on others' calls.
 * Each call is bounded by its batch's latest deadline (the driver's network timeout).
 *
 * <p>Deadlines by the database's clock. Each request carries its deadline by the database's clock
 * ({@link ServerClock}, learned from the {@code clock_timestamp()} each answer carries, and before the first batch
 * from one {@code SELECT}): the function refuses, touching nothing, a request that reaches it past its deadline (a
 * stalled server, a frozen network), and rolls the whole batch back if the deadline of one it decided has passed by
 * its end. So a request whose caller was answered by the failure policy is never applied afterwards (but for the
 * instant between the function's end and its commit). The requests of such a batch still in time are sent again
 * without the late ones, so that one late request does not cost the others their answers.
 */
final class PostgresBatches {

    /** The most requests in one batch. */
    static final int MAX_REQUESTS = 256;

    /** How many times warming a connection reads the database's clock ({@link #learnClock}). */
    private static final int CLOCK_SAMPLES = 3;

    /**
     * How many times a batch rolled back for a late request ({@link #rolledBack}) is sent again without the late
     * ones. The request that was late is left out by this process's clock, which the deadline sent by the
     * database's is never later than, so one resend is enough most of the time.
     */
    static final int RESENDS = 2;

    /** The words of the batch function's refusal of a batch that ran past a request's deadline (common.sql). */
    private static final String ROLLED_BACK = "the batch ran past the deadline of a request it decided";

    /** The most parts (rows) in one batch, beyond which a batch takes no more requests. */
    static final int MAX_PARTS = 1024;

    /** Sends the batches that follow one in flight: daemon threads, made as needed, ended after a minute idle. */
    private static final Executor FOLLOW_UPS =
            new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "sluice-postgres-batches");
                t.setDaemon(true);
                return t;
            });

    /** One part of a request: a decider's key and cost, at a time. */
    record Part(PostgresDecider decider, String key, long cost, long nowNanos) {}

    /** What one request of a batch carries. */
    private record Request(List<Part> parts, boolean joint) {}

    /** SQLSTATEs of a statement the server ended for taking too long: {@code query_canceled}, {@code lock_not_available}. */
    private static final Set<String> TIMED_OUT = Set.of("57014", "55P03");

    private final PostgresStore store;
    private final String sql;
    private final String nowSql;
    private final ServerClock clock = new ServerClock();

    private final GroupCommit<Request, List<StoreDecision>> requests;

    PostgresBatches(PostgresStore store) {
        this.store = store;
        this.sql = store.schema().decideBatchSql();
        this.nowSql = store.schema().nowSql();
        this.requests = GroupCommit.<Request, List<StoreDecision>>builder("PostgreSQL", this::send)
                .maxRequests(MAX_REQUESTS)
                .maxWeight(MAX_PARTS)
                .followUps(FOLLOW_UPS)
                .failure(e -> new SluiceException("PostgreSQL failed a batch of decisions: " + e, timeoutOr(e)))
                .build();
    }

    /**
     * A request the database refused, or rolled back, because its deadline had passed: a timeout
     * ({@link dev.sluice.Decision#timedOut()}), with the database's error, if any, as its cause.
     */
    private static TimeoutException late(@Nullable Throwable cause) {
        TimeoutException t = new TimeoutException("the request's deadline passed before PostgreSQL decided it");
        if (cause != null) {
            t.initCause(cause);
        }
        return t;
    }

    /**
     * {@code e}, or for a statement the server ended at its {@code statement_timeout} or {@code lock_timeout}, the
     * same failure as a {@link SQLTimeoutException}, so that it is told as a timeout.
     */
    private static Throwable timeoutOr(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException sql && !(t instanceof SQLTimeoutException) && Calls.stateIn(sql, TIMED_OUT)) {
                return new SQLTimeoutException(sql.getMessage(), sql.getSQLState(), e);
            }
        }
        return e;
    }

    /**
     * Decides one request in the next batch and waits for it until {@code deadlineNanos}.
     *
     * @param parts one part (acquiring), or the parts of a joint request, each on a row of its own
     * @param joint all or nothing over the parts
     * @throws SluiceException       if PostgreSQL fails or does not answer by the deadline; the request then took
     *                               nothing (but for one PostgreSQL ran in time whose answer came too late)
     * @throws IllegalStateException if the DataSource has been closed
     */
    List<StoreDecision> decide(List<Part> parts, boolean joint, long deadlineNanos) {
        return requests.decide(new Request(parts, joint), parts.size(), deadlineNanos);
    }

    /**
     * Calls the batch function with no request on {@code c}, so that the connection's server process compiles it
     * before a batch must wait for that ({@link Calls.Warmer}), and reads the database's clock a few times, so that
     * the first batches' deadlines are not sent early by a loose first bound ({@link #learnClock}).
     */
    void warm(Connection c) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setArray(1, c.createArrayOf("text", new String[0]));
            s.setObject(2, new byte[0][]);
            s.setString(3, store.options().namespace());
            s.setArray(4, c.createArrayOf("text", new String[0]));
            s.setArray(5, c.createArrayOf("text", new String[0]));
            for (int i = 6; i <= 11; i++) {
                s.setObject(i, i == 9 || i == 10 ? new boolean[0] : new long[0]);
            }
            s.setArray(12, c.createArrayOf("bigint", new Long[0]));
            s.setObject(13, new int[0]);
            s.setObject(14, new boolean[0]);
            s.setObject(15, new long[0]);
            s.setInt(16, Calls.lockTimeoutMillis(store.options().timeout()));
            s.setBoolean(17, !store.synchronousCommit());
            s.executeQuery().close();
        }
        learnClock(c, CLOCK_SAMPLES);
    }

    /**
     * Learns the database's clock from {@code samples} reads of it on {@code c}. Each bound is as loose as the time
     * between the server's read and the answer's arrival, and a deadline is sent that much early; the first read of a
     * new process (classes loading, code not yet compiled) can take a hundred milliseconds on a busy machine, enough
     * to have the first batches refused as late. Reads made while warming a connection, after that first one, keep
     * the bound tight before any decision needs it.
     */
    private void learnClock(Connection c, int samples) throws SQLException {
        try (PreparedStatement s = c.prepareStatement(nowSql)) {
            for (int i = 0; i < samples; i++) {
                try (ResultSet rs = s.executeQuery()) {
                    if (!rs.next()) {
                        throw new SQLException("the clock function returned no row");
                    }
                    clock.learn(rs.getLong(1), System.nanoTime());
                }
            }
        }
    }

    /**
     * Runs {@code batch} on the calling thread, by its latest deadline; the stage is complete when it returns. A batch
     * the function rolled back because one request it decided was past its deadline by the end ({@link #rolledBack})
     * took nothing, so the requests still in time are sent again, without the late ones, at most {@link #RESENDS}
     * times: a late request does not cost the others of its batch their answers.
     */
    private CompletionStage<?> send(List<GroupCommit.Request<Request, List<StoreDecision>>> batch) {
        List<GroupCommit.Request<Request, List<StoreDecision>>> sent = batch;
        for (int resends = 0; ; resends++) {
            long deadline = sent.get(0).deadlineNanos();
            for (var r : sent) {
                deadline = deadline - r.deadlineNanos() < 0 ? r.deadlineNanos() : deadline;
            }
            try {
                var requests = sent;
                store.call(deadline, c -> run(c, requests));
                return CompletableFuture.completedFuture(null);
            } catch (SQLException | RuntimeException e) {
                if (resends == RESENDS || !rolledBack(e)) {
                    return CompletableFuture.failedFuture(e);
                }
                long now = System.nanoTime();
                List<GroupCommit.Request<Request, List<StoreDecision>>> inTime = new ArrayList<>(sent.size());
                for (var r : sent) {
                    if (r.isDone()) {
                        continue;
                    }
                    if (now - r.deadlineNanos() < 0) {
                        inTime.add(r);
                    } else {
                        r.fail(new SluiceException(
                                "PostgreSQL ran the request's batch past its deadline: rolled back, nothing taken",
                                late(e)));
                    }
                }
                if (inTime.isEmpty()) {
                    return CompletableFuture.completedFuture(null);
                }
                sent = inTime;
            }
        }
    }

    /**
     * Whether {@code e} is the batch function's refusal of a batch that ran past the deadline of a request it
     * decided (common.sql, {@code <table>_decide_batch}): rolled back, nothing taken.
     */
    static boolean rolledBack(Throwable e) {
        return e instanceof SQLException q
                && "P0001".equals(q.getSQLState())
                && String.valueOf(q.getMessage()).contains(ROLLED_BACK);
    }

    private boolean run(Connection c, List<GroupCommit.Request<Request, List<StoreDecision>>> batch)
            throws SQLException {
        if (!clock.known()) {
            learnClock(c, 1);
        }
        int n = 0;
        for (var r : batch) {
            n += r.payload().parts().size();
        }
        String[] algorithms = new String[n];
        byte[][] ids = new byte[n][];
        String[] shapes = new String[n];
        String[] readable = new String[n];
        long[] limits = new long[n];
        long[] windows = new long[n];
        long[] subWindows = new long[n];
        boolean[] stricts = new boolean[n];
        boolean[] counted = new boolean[n];
        long[] costs = new long[n];
        @Nullable Long[] now = new Long[n]; // null: the store's own time
        int[] sizes = new int[batch.size()];
        boolean[] joints = new boolean[batch.size()];
        long[] deadlines = new long[batch.size()];
        int i = 0;
        int q = 0;
        for (var r : batch) {
            for (Part p : r.payload().parts()) {
                PostgresDecider d = p.decider();
                algorithms[i] = d.algorithm();
                ids[i] = d.id(p.key());
                shapes[i] = d.shape();
                readable[i] = Keys.readable(p.key());
                limits[i] = d.limit();
                windows[i] = d.window();
                subWindows[i] = d.subWindow();
                stricts[i] = d.strict();
                counted[i] = d.countRejected();
                costs[i] = p.cost();
                now[i] = p.nowNanos() == AtomicDecider.STORE_TIME ? null : p.nowNanos();
                i++;
            }
            sizes[q] = r.payload().parts().size();
            joints[q] = r.payload().joint();
            deadlines[q] = clock.serverTime(r.deadlineNanos());
            q++;
        }
        try (PreparedStatement s = c.prepareStatement(sql)) {
            s.setArray(1, c.createArrayOf("text", algorithms));
            s.setObject(2, ids);
            s.setString(3, store.options().namespace());
            s.setArray(4, c.createArrayOf("text", shapes));
            s.setArray(5, c.createArrayOf("text", readable));
            s.setObject(6, limits);
            s.setObject(7, windows);
            s.setObject(8, subWindows);
            s.setObject(9, stricts);
            s.setObject(10, counted);
            s.setObject(11, costs);
            s.setArray(12, c.createArrayOf("bigint", now));
            s.setObject(13, sizes);
            s.setObject(14, joints);
            s.setObject(15, deadlines);
            s.setInt(16, Calls.lockTimeoutMillis(store.options().timeout()));
            s.setBoolean(17, !store.synchronousCommit());
            try (ResultSet rs = s.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the batch function returned no row");
                }
                long arrived = System.nanoTime();
                clock.learn(rs.getLong(1), arrived);
                answer(batch, n, rs);
            }
        }
        return true;
    }

    /** Hands each request its decisions, or its refusal as past its deadline. */
    private static void answer(List<GroupCommit.Request<Request, List<StoreDecision>>> batch, int n, ResultSet rs)
            throws SQLException {
        Object[] done = array(rs, 2, batch.size());
        Object[] allowed = array(rs, 3, n);
        Object[] remaining = array(rs, 4, n);
        Object[] reset = array(rs, 5, n);
        Object[] retry = array(rs, 6, n);
        Object[] place = array(rs, 7, n);
        int i = 0;
        int q = 0;
        for (var r : batch) {
            int parts = r.payload().parts().size();
            if (!Boolean.TRUE.equals(done[q++])) {
                r.fail(new SluiceException(
                        "PostgreSQL ran the request past its deadline: refused, nothing taken", late(null)));
                i += parts;
                continue;
            }
            List<StoreDecision> decisions = new ArrayList<>(parts);
            for (int p = 0; p < parts; p++, i++) {
                decisions.add(new StoreDecision(
                        (Boolean) allowed[i], (Long) remaining[i], (Long) reset[i], (Long) retry[i], (Long) place[i]));
            }
            r.answer(decisions);
        }
    }

    /** The array in column {@code column}, which must have at least {@code length} elements. */
    private static Object[] array(ResultSet rs, int column, int length) throws SQLException {
        Array a = rs.getArray(column);
        Object[] values = a == null ? new Object[0] : (Object[]) a.getArray();
        if (values.length < length) {
            throw new SQLException(
                    "the batch function answered " + values.length + " values in column " + column + " for " + length);
        }
        return values;
    }

    @Override
    public String toString() {
        return "PostgresBatches[" + store.table() + "]";
    }
}
