package dev.sluice.http;

import jakarta.servlet.http.HttpServletRequest;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Tells, without flooding the log, that requests pass a filter unlimited because its extractor gave them no
 * descriptor: the first one at {@code WARNING}, naming the filter and the request, so a filter mapped where its
 * extractor finds nothing (an OAuth extractor on {@code /api/*}) is seen at once; later ones at {@code DEBUG}, at most
 * one line a minute with how many passed since the last line. Thread-safe.
 */
final class UnlimitedRequestLog {

    private static final System.Logger LOG = System.getLogger(SluiceFilter.class.getName());

    private static final long INTERVAL_NANOS = 60_000_000_000L;

    private final String filter;
    private final AtomicLong unlogged = new AtomicLong();
    private final AtomicLong nextLine = new AtomicLong(Long.MIN_VALUE); // System.nanoTime of the next line; MIN: first

    UnlimitedRequestLog(String filter) {
        this.filter = filter;
    }

    /** Counts a request that passed unlimited, and logs if it is time to. */
    void passed(HttpServletRequest request) {
        long count = unlogged.incrementAndGet();
        long next = nextLine.get();
        long now = System.nanoTime();
        if (next == Long.MIN_VALUE) {
            if (nextLine.compareAndSet(next, now + INTERVAL_NANOS)) {
                unlogged.addAndGet(-count);
                LOG.log(
                        System.Logger.Level.WARNING,
                        () -> filter + ": " + request.getMethod() + " " + request.getRequestURI()
                                + " passed unlimited: the extractor found no descriptor in it. Later requests like it"
                                + " are logged at DEBUG, at most once a minute; if none of the requests here should"
                                + " pass unlimited, give the filter an extractor that reads what they carry");
            }
        } else if (now - next >= 0 && nextLine.compareAndSet(next, now + INTERVAL_NANOS)) {
            long n = unlogged.getAndSet(0);
            LOG.log(
                    System.Logger.Level.DEBUG,
                    () -> filter + ": " + n + " requests passed unlimited since the last line, the extractor finding no"
                            + " descriptor in them (the latest: " + request.getMethod() + " "
                            + request.getRequestURI() + ")");
        }
    }
}
