package dev.sluice.internal;

import dev.sluice.SluiceException;
import java.lang.System.Logger.Level;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;

/**
 * Store failures made visible when nobody listens: at most one {@link System.Logger} warning ({@code dev.sluice}) per
 * interval, counting the failures since the last line and giving the latest, so an outage of a minute writes one
 * line, not one per request. Each shared limiter with no listener has one; thread-safe.
 *
 * <pre>
 * WARNING dev.sluice: RedisStore[...]: 1,234 store failures in the last 60 s, answered by FAIL_OPEN; the latest: ...
 * </pre>
 */
public final class FailureLog {

    /** The default interval between two lines: one minute. */
    public static final long DEFAULT_INTERVAL_NANOS = 60_000_000_000L;

    private static final System.Logger LOG = System.getLogger("dev.sluice");

    private final String source;
    private final String answeredBy;
    private final long intervalNanos;
    private final BiConsumer<String, SluiceException> sink;
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong nextLine = new AtomicLong(Long.MIN_VALUE);
    private final AtomicReference<SluiceException> latest = new AtomicReference<>();

    /**
     * A log for {@code source} (named in every line), whose failures are answered by {@code answeredBy} (a failure
     * policy, or what the store does instead).
     */
    public FailureLog(String source, String answeredBy) {
        this(source, answeredBy, DEFAULT_INTERVAL_NANOS, (line, e) -> LOG.log(Level.WARNING, line, e));
    }

    FailureLog(String source, String answeredBy, long intervalNanos, BiConsumer<String, SluiceException> sink) {
        this.source = source;
        this.answeredBy = answeredBy;
        this.intervalNanos = intervalNanos;
        this.sink = sink;
    }

    /** Counts a failure and writes a line if none was written in the last interval. */
    public void failed(SluiceException failure) {
        failures.incrementAndGet();
        latest.set(failure);
        long now = System.nanoTime();
        long due = nextLine.get();
        if (due != Long.MIN_VALUE && now - due < 0) {
            return;
        }
        if (!nextLine.compareAndSet(due, now + intervalNanos)) {
            return;
        }
        long count = failures.getAndSet(0);
        SluiceException last = Objects.requireNonNull(latest.get(), "set before this line");
        sink.accept(
                source + ": " + count + " store failure" + (count == 1 ? "" : "s")
                        + (due == Long.MIN_VALUE ? "" : " in the last " + intervalNanos / 1_000_000_000L + " s")
                        + ", answered by " + answeredBy
                        + " (set a RateLimitListener to count them yourself); the latest: "
                        + last.getMessage(),
                last);
    }

    /** Failures counted since the last line was written. */
    long pending() {
        return failures.get();
    }
}
