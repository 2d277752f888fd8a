package dev.sluice.spi;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;

/**
 * A store's first calls, made by its builder before any caller's. A new process's first calls load classes, open the
 * connections of a pool and have the server prepare what it runs (a script, a statement); on a busy machine such a
 * call takes longer than a call's timeout, and a caller's would be answered by the failure policy (fail-open: admitted
 * and not counted). A warm-up makes those calls itself, from several threads at once (so that a pool opens several
 * connections and a store's batches queue), with the store's own timeout, until every thread has seen its calls
 * answered in time {@value #ROUNDS} rounds in a row. Its failures are nobody's: they are not reported to a listener
 * or logged.
 *
 * <p>The calls ({@link #calls}) take the paths a limiter's first decisions take: a {@code peek} and a consuming
 * decision of every algorithm, the latter through the store's batches (their script or statement sent, their classes
 * loaded, their code run). They decide {@link #KEY} under {@link #namespace(String) a namespace of their own}, which
 * no store's namespace can be: no caller's key shares their state, and what they take (one permit a second) is
 * nobody's and expires within the second.
 */
public final class WarmUp {

    /** Threads that call at once. */
    public static final int THREADS = 4;
    /** Clean rounds of calls each thread must see in a row. */
    public static final int ROUNDS = 2;

    /** The key the calls of {@link #calls} decide. */
    public static final String KEY = "sluice-warm-up";

    /**
     * What a store's namespace becomes for the calls of {@link #calls}: the namespace with a leading {@code '$'},
     * which {@link SharedStoreOptions#requireNamespace} refuses in every store's namespace, so the state these calls
     * write is under a name no caller's key reaches.
     */
    public static final String NAMESPACE_PREFIX = "$";

    private static final long PAUSE_NANOS = 10_000_000;

    private WarmUp() {}

    /**
     * The namespace the calls of {@link #calls} decide under, for a store whose namespace is {@code namespace}:
     * {@value #NAMESPACE_PREFIX} and {@code namespace}.
     */
    public static String namespace(String namespace) {
        return NAMESPACE_PREFIX + SharedStoreOptions.requireNamespace(namespace);
    }

    /**
     * Two calls per algorithm, by the decider {@code deciders} gives for a limit of one a second of that algorithm,
     * which must decide under {@link #namespace(String)}: a {@code peek} of {@link #KEY} (consuming and writing
     * nothing) and a consuming decision of it, cost 1, both at the store's time. The consuming one takes the path of
     * a limiter's {@code tryAcquire} (a store's batches).
     */
    public static List<Runnable> calls(Function<LimiterConfig, AtomicDecider> deciders) {
        List<Runnable> calls = new ArrayList<>();
        for (LimiterConfig config : configs()) {
            AtomicDecider decider = deciders.apply(config);
            calls.add(() -> decider.decide(KEY, 1, false, AtomicDecider.STORE_TIME));
            calls.add(() -> decider.decide(KEY, 1, true, AtomicDecider.STORE_TIME));
        }
        return List.copyOf(calls);
    }

    /**
     * The configurations {@link #calls} decides with, one per algorithm: a limit of one a second. For a store that
     * warms more than the process (a new connection, say) with the same calls: a {@code peek} of {@link #KEY}, cost
     * 1, at the store's time.
     */
    public static List<LimiterConfig> configs() {
        List<LimiterConfig> configs = new ArrayList<>();
        for (Algorithm algorithm : Algorithm.values()) {
            configs.add(new LimiterConfig(algorithm, 1, Duration.ofSeconds(1), Clock.systemUTC(), false, 1, false));
        }
        return List.copyOf(configs);
    }

    /**
     * Runs each of {@code calls} in turn from {@value #THREADS} threads at once, round after round, until every thread
     * has had {@value #ROUNDS} rounds in a row in which no call threw, or until {@code bound} has passed. A call
     * answers in time or throws (a store's calls throw past their timeout).
     *
     * @return whether every thread saw its rounds answered in time within {@code bound}
     */
    public static boolean run(Duration bound, List<Runnable> calls) {
        Objects.requireNonNull(bound, "bound must not be null");
        long deadline = System.nanoTime() + bound.toNanos();
        AtomicBoolean cold = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            Thread t = new Thread(
                    () -> {
                        if (!warm(deadline, calls)) {
                            cold.set(true);
                        }
                    },
                    "sluice-warm-up-" + i);
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return !cold.get();
    }

    private static boolean warm(long deadline, List<Runnable> calls) {
        int clean = 0;
        while (clean < ROUNDS) {
            if (deadline - System.nanoTime() <= 0) {
                return false;
            }
            boolean failed = false;
            for (Runnable call : calls) {
                try {
                    call.run();
                } catch (RuntimeException e) { // a cold call past its timeout, or a store not reached yet
                    failed = true;
                }
            }
            clean = failed ? 0 : clean + 1;
            if (failed) {
                LockSupport.parkNanos(PAUSE_NANOS); // a store that refuses at once is not asked in a busy loop
            }
        }
        return true;
    }
}
