package dev.sluice.server;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Logs refused requests without letting a flood of them fill the log: one line per {@linkplain
 * InvalidRequestException.Kind kind} at most every {@link #INTERVAL_NANOS}, each saying how many of that kind went
 * unlogged since the one before, and never a stack trace (a client's mistake is not the service's). Every refusal is
 * still counted, in {@code sluice_server_requests_total{result="invalid"}}.
 *
 * <p>Thread-safe, lock-free: a refusal costs two atomic operations when it is not logged.
 */
final class BadRequestLog {
    /** Ten seconds: the longest a kind of refusal stays unlogged while it goes on. */
    static final long INTERVAL_NANOS = 10_000_000_000L;

    private static final System.Logger LOG = System.getLogger(BadRequestLog.class.getName());

    /** A slot per kind, by its ordinal (in memory only, never stored or sent). */
    private final Slot[] slots = new Slot[InvalidRequestException.Kind.values().length];

    private static final class Slot {
        /** When this kind was last logged; {@code Long.MIN_VALUE}: never. */
        final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE);
        /** Refusals of this kind since it was last logged. */
        final AtomicLong unlogged = new AtomicLong();
    }

    BadRequestLog() {
        for (int i = 0; i < slots.length; i++) {
            slots[i] = new Slot();
        }
    }

    /** Logs {@code e}, refused on {@code transport}, unless its kind was logged less than the interval ago. */
    @SuppressWarnings("EnumOrdinal")
    void refused(String transport, InvalidRequestException e) {
        Slot slot = slots[e.kind().ordinal()];
        long now = System.nanoTime();
        long last = slot.lastLogged.get();
        if ((last != Long.MIN_VALUE && now - last < INTERVAL_NANOS) || !slot.lastLogged.compareAndSet(last, now)) {
            slot.unlogged.incrementAndGet();
            return;
        }
        long skipped = slot.unlogged.getAndSet(0);
        LOG.log(
                System.Logger.Level.WARNING,
                "refused a " + transport + " request (" + e.kind().name().toLowerCase(java.util.Locale.ROOT) + "): "
                        + e.getMessage()
                        + (skipped > 0 ? " (and " + skipped + " more of this kind since the last such line)" : "")
                        + "; logged at most once every " + INTERVAL_NANOS / 1_000_000_000L + " s per kind");
    }
}
