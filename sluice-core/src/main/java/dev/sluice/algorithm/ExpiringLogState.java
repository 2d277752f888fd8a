package dev.sluice.algorithm;

import dev.sluice.Decision;

/**
 * A log of {@code (expiresAt, weight)} entries in increasing {@code expiresAt}: the common shape of the sliding log
 * and the sliding-window counter. An entry counts while {@code now < expiresAt}; the two algorithms differ only
 * in the expiry they give a request ({@link #expiryOf}).
 *
 * <pre>
 * SLIDING_LOG             a request at t counts in (t−W, t], so while now &lt; t + W:   expiresAt = t + W
 * SLIDING_WINDOW_COUNTER  sub-window k = [k·S, (k+1)·S) counts while its start k·S &gt; now − W: expiresAt = k·S + W
 *   strict                ... or while its end (k+1)·S &gt; now − W:                 expiresAt = (k+1)·S + W
 * </pre>
 *
 * Requests with the same expiry share one entry, so the sub-window counter holds at most {@code buckets + 1}
 * entries and the log one entry per distinct instant. Entries live in a ring of {@code (expiresAt, weight)}
 * pairs in one array, {@code ring[2i]} and {@code ring[2i+1]}, whose capacity in pairs is a power of two,
 * grown and shrunk by halves. A key with one entry, the common idle key, holds one array of two longs
 * (32 bytes; two parallel arrays of two used to take 64).
 */
abstract class ExpiringLogState extends AlgorithmState {

    private static final long[] EMPTY = new long[0];

    private long[] ring = EMPTY;
    private int head;  // slot of the oldest entry; slot i is ring[2i], ring[2i+1]
    private int size;
    private long total;  // sum of weight over the live entries, saturating

    /** The expiry of permits taken at {@code now}. */
    abstract long expiryOf(Params p, long now);

    private int capacity() {
        return ring.length >> 1;
    }

    /** The slot of the {@code i}-th oldest entry. */
    private int at(int i) {
        return (head + i) & (capacity() - 1);
    }

    private long expiry(int slot) {
        return ring[2 * slot];
    }

    private long weight(int slot) {
        return ring[2 * slot + 1];
    }

    private long newest() {
        return expiry(at(size - 1));
    }

    private void prune(long now) {
        while (size > 0 && expiry(head) <= now) {
            total -= weight(head);
            head = (head + 1) & (capacity() - 1);
            size--;
        }
        if (size == 0) {
            total = 0;
        }
        if (capacity() > 8 && size < capacity() / 4) {
            resize(capacity() / 2);
        }
    }

    private void append(long expiresAt, long cost) {
        if (size > 0 && newest() >= expiresAt) {  // same instant or sub-window (or a clock stepped back)
            int last = at(size - 1);
            ring[2 * last + 1] = ExactMath.saturatedAdd(weight(last), cost);
        } else {
            if (size == capacity()) {
                resize(Math.max(1, capacity() * 2));
            }
            int slot = at(size);
            ring[2 * slot] = expiresAt;
            ring[2 * slot + 1] = cost;
            size++;
        }
        total = ExactMath.saturatedAdd(total, cost);
    }

    private void resize(int pairs) {
        long[] r = new long[2 * pairs];
        for (int i = 0; i < size; i++) {
            int slot = at(i);
            r[2 * i] = ring[2 * slot];
            r[2 * i + 1] = ring[2 * slot + 1];
        }
        ring = r;
        head = 0;
    }

    @Override
    public Decision decide(Params p, long now, long cost, boolean consume) {
        prune(now);
        boolean ok = total <= p.limit - cost;
        if (consume && (ok || p.countRejected)) {
            append(expiryOf(p, now), cost);
        }
        long reset = size == 0 ? 0 : newest() - now;
        long remaining = remaining(p.limit, total);
        if (ok) {
            return Decision.allowed(p.limit, remaining, reset);
        }
        return Decision.denied(p.limit, remaining, reset, untilFreed(total - (p.limit - cost), now));
    }

    /** Time until the oldest entries holding at least {@code excess} permits have expired. */
    private long untilFreed(long excess, long now) {
        long freed = 0;
        for (int i = 0; i < size; i++) {
            freed += weight(at(i));
            if (freed >= excess) {
                return expiry(at(i)) - now;
            }
        }
        return newest() - now;  // only reachable when the total saturated
    }

    @Override
    public long place(Params p, long now) {
        return size == 0 ? Long.MIN_VALUE : newest();
    }

    @Override
    public boolean giveBack(Params p, long now, long cost, long place) {
        prune(now);
        if (place <= now) {
            return false;
        }
        int lo = 0;
        int hi = size - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            long e = expiry(at(mid));
            if (e < place) {
                lo = mid + 1;
            } else if (e > place) {
                hi = mid - 1;
            } else {
                int slot = at(mid);
                long back = Math.min(weight(slot), cost);
                ring[2 * slot + 1] -= back;
                total -= back;
                dropEmptyEnds();
                return back > 0;
            }
        }
        return false;
    }

    private void dropEmptyEnds() {
        while (size > 0 && weight(at(size - 1)) == 0) {
            size--;
        }
        while (size > 0 && weight(head) == 0) {
            head = (head + 1) & (capacity() - 1);
            size--;
        }
    }

    @Override
    public long expiresAt(Params p) {
        return size == 0 ? Long.MIN_VALUE : newest();
    }
}
