package dev.sluice.server;

import dev.sluice.Algorithm;
import dev.sluice.Decision;
import dev.sluice.LimiterConfig;
import dev.sluice.RateLimiter;
import dev.sluice.lease.LeasedStore;
import dev.sluice.spi.RateLimitStore;
import io.grpc.BindableService;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.protobuf.services.HealthStatusManager;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * Whether the service can decide, the one answer behind {@code GET /healthcheck} and the standard gRPC health service
 * ({@code grpc.health.v1.Health}, service names {@code ""} and {@value #GRPC_SERVICE}).
 *
 * <p>It is ready when the configuration allows it (from the start; with an xDS server, once its first configuration is
 * in force; with {@code HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED}, once a domain is loaded: see
 * {@link #configChanged()}) and the store path answers: a probe is a real decision of the store
 * (a {@code tryAcquire} on a key of its own, {@code sluice-health:N}, with a one-second window), submitted where
 * requests submit theirs; on a leased store its claims are counted apart from the requests' ({@code on="probe"}). At start {@link #warmUp} runs probes, one right after the other, until {@value #WARM_CALLS}
 * have answered within the requests' deadline, so a fresh JVM's first store calls are made before any request's;
 * then a background probe every {@link #PROBE_INTERVAL} follows the store: {@value #GRACE_FAILURES} consecutive probes
 * that fail or get no answer within a second (or the deadline, if longer) make the service unready. It tells a store
 * that is down from one that answers; a single slow call is left to the domain's {@code on_store_failure}. The
 * first answered probe makes the service ready again (if it started unready, the JVM's first store calls were the
 * probes'). From {@link #stop} on it is unready for good. A store whose decisions never wait for it (the in-memory store,
 * synchronized mode) is probed on the caller's thread, and a synchronized store answers from memory, so only the
 * configuration and the stop decide there. A service that must have a domain loaded to be ready
 * ({@code HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED}) asks its configuration at each probe, so it turns ready within a
 * {@link #PROBE_INTERVAL} of the first domain's load.
 */
final class Readiness implements AutoCloseable {
    /** The gRPC health service name of the rate-limit service, as envoyproxy/ratelimit names it. */
    static final String GRPC_SERVICE = "ratelimit";
    /** Probes in a row that must answer within the deadline before the service first reports ready. */
    static final int WARM_CALLS = 5;
    /** Consecutive failed background probes that make the service unready: the grace a store failure gets. */
    static final int GRACE_FAILURES = 3;
    /** Time between two background probes. */
    static final Duration PROBE_INTERVAL = Duration.ofSeconds(1);

    private static final System.Logger LOG = System.getLogger(Readiness.class.getName());
    /** Probe keys in turn: a new key in a new window, so that a leased store claims from the store again. */
    private static final int PROBE_KEYS = 8;

    private final HealthStatusManager health = new HealthStatusManager();
    private final RateLimiter probe;
    private final @Nullable ExecutorService storeCalls;
    private final long deadlineNanos;
    private final String storeName;
    private final BooleanSupplier configured;
    private final ScheduledExecutorService prober;
    private @Nullable ScheduledFuture<?> probing;
    private long probes;
    private int failures;
    private boolean storeAnswers;

    private volatile boolean serving;
    private volatile boolean stopped;

    /**
     * @param storeCalls where requests' store calls run (null: on the caller's thread)
     * @param deadline   how long a request waits for its store call
     * @param storeName  the store as logs may show it (without a password)
     */
    Readiness(RateLimitStore store, @Nullable ExecutorService storeCalls, Duration deadline, String storeName) {
        this(store, storeCalls, deadline, storeName, () -> true);
    }

    /**
     * @param configured whether the configuration lets the service be ready (with
     *                   {@code HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED}: once a domain is loaded; with an xDS server:
     *                   once its first configuration is in force); asked at each probe and at {@link #configChanged()}
     */
    Readiness(
            RateLimitStore store,
            @Nullable ExecutorService storeCalls,
            Duration deadline,
            String storeName,
            BooleanSupplier configured) {
        this.configured = configured;
        LimiterConfig config = new LimiterConfig(
                Algorithm.FIXED_WINDOW, 1_000_000_000L, Duration.ofSeconds(1), Clock.systemUTC(), false, 1, false);
        // a leased store counts the probe's claims apart from the requests' (sluice_leased_claims_total{on="probe"})
        this.probe = store instanceof LeasedStore leased ? leased.bindProbe(config) : store.bind(config);
        this.storeCalls = storeCalls;
        this.deadlineNanos = deadline.toNanos();
        this.storeName = storeName;
        this.prober = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "sluice-health");
            t.setDaemon(true);
            return t;
        });
        publish(); // the health service starts SERVING for "": not before the store has answered
    }

    /** The gRPC health service, to add to the gRPC server. */
    BindableService grpcService() {
        return health.getHealthService();
    }

    /** Whether the service can decide: what {@code /healthcheck} and the gRPC health service say. */
    boolean serving() {
        return serving;
    }

    /**
     * Probes the store until {@value #WARM_CALLS} probes in a row answer within the deadline, waiting at most
     * {@code budget}; then probes it in the background every {@link #PROBE_INTERVAL}.
     *
     * @return whether the store answered, so that the service is ready
     */
    boolean warmUp(Duration budget) {
        boolean warm = warm(budget);
        synchronized (this) {
            storeAnswers = warm;
            failures = storeAnswers ? 0 : GRACE_FAILURES;
            publish();
        }
        long interval = PROBE_INTERVAL.toMillis();
        synchronized (this) {
            if (!stopped) {
                probing = prober.scheduleWithFixedDelay(this::probeOnce, interval, interval, TimeUnit.MILLISECONDS);
            }
            return storeAnswers;
        }
    }

    /** The configuration changed: health follows now (ready if it now allows it), not at the next probe. */
    synchronized void configChanged() {
        publish();
    }

    /** From now on unready, on both ports, until the process ends. */
    synchronized void stop() {
        stopped = true;
        serving = false;
        health.enterTerminalState(); // every service NOT_SERVING, for good
        if (probing != null) {
            probing.cancel(false);
        }
        prober.shutdownNow();
    }

    @Override
    public void close() {
        stop();
        probe.close();
    }

    /** Whether {@value #WARM_CALLS} probes, one right after the other, answered within the deadline. */
    private boolean warm(Duration budget) {
        long end = System.nanoTime() + budget.toNanos();
        int inTime = 0;
        while (inTime < WARM_CALLS && System.nanoTime() - end < 0) {
            // a cold call may take longer than a request's deadline: wait for it, but count only calls in time
            long started = System.nanoTime();
            boolean answered = call(probeWaitNanos());
            if (answered && System.nanoTime() - started <= deadlineNanos) {
                inTime++;
            } else if (!answered) {
                pause(100);
            }
        }
        return inTime >= WARM_CALLS;
    }

    /** How long a probe waits for the store: a second, or the deadline if longer. */
    private long probeWaitNanos() {
        return Math.max(deadlineNanos, TimeUnit.SECONDS.toNanos(1));
    }

    /**
     * One background probe, recorded. Whatever it meets, the next one runs: a task of the scheduler that throws ends
     * the probes for good, and readiness would then stay what it was.
     */
    private void probeOnce() {
        boolean answered;
        try {
            answered = call(probeWaitNanos());
        } catch (RuntimeException | Error e) { // a probe that cannot be made (a bug, the VM's trouble) is a failed one
            answered = false;
        }
        try {
            recordProbe(answered);
        } catch (RuntimeException | Error ignored) { // its logging failed (out of memory): the next probe records again
        }
    }

    /** Counts one background probe's result; turns unready after {@value #GRACE_FAILURES} failures in a row. */
    synchronized void recordProbe(boolean answered) {
        if (stopped) {
            return;
        }
        boolean before = storeAnswers;
        failures = answered ? 0 : failures + 1;
        storeAnswers = answered || (before && failures < GRACE_FAILURES);
        if (storeAnswers != before) {
            LOG.log(
                    storeAnswers ? System.Logger.Level.INFO : System.Logger.Level.WARNING,
                    storeAnswers
                            ? "the store " + storeName + " answers again: ready"
                            : "the store " + storeName + " failed " + failures
                                    + " probes in a row: not ready until it answers");
        }
        publish();
    }

    /** One probe: whether the store decided within {@code waitNanos}. */
    private boolean call(long waitNanos) {
        String key = "sluice-health:" + (probes++ % PROBE_KEYS);
        ExecutorService executor = storeCalls;
        if (executor == null) {
            return answered(() -> probe.tryAcquire(key));
        }
        Future<Decision> f;
        try {
            f = executor.submit(() -> probe.tryAcquire(key));
        } catch (RejectedExecutionException e) {
            return false;
        }
        try {
            return !f.get(waitNanos, TimeUnit.NANOSECONDS).failed();
        } catch (TimeoutException | ExecutionException e) {
            f.cancel(false);
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static boolean answered(java.util.function.Supplier<Decision> decision) {
        try {
            return !decision.get().failed();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private synchronized void publish() {
        if (stopped) {
            return;
        }
        serving = storeAnswers && configured.getAsBoolean();
        ServingStatus status = serving ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
        for (String service : List.of(HealthStatusManager.SERVICE_NAME_ALL_SERVICES, GRPC_SERVICE)) {
            health.setStatus(service, status);
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
