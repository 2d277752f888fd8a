package dev.sluice.algorithm;

import dev.sluice.Decision;
import java.util.Arrays;

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
 * Requests with the same expiry share one entry, so the sub-window counter holds one entry per sub-window that
 * counts ({@code buckets}, one more when {@code S} does not divide {@code W}, one more when strict) and the log one
 * entry per distinct instant. Entries live in a ring of {@code (expiresAt, weight)} pairs in one array,
 * {@code ring[2i]} and {@code ring[2i+1]}, whose capacity in pairs is a power of two, grown and shrunk by halves. A
 * key with one entry, the common idle key, holds one array of two longs (32 bytes, where two parallel arrays would
 * take 64).
 */
abstract class ExpiringLogState extends AlgorithmState {

    private static final long[] EMPTY = new long[0];

    private long[] ring = EMPTY;
    private int head; // slot of the oldest entry; slot i is ring[2i], ring[2i+1]
    private int size;
    private long total; // sum of weight over the live entries, saturating at Long.MAX_VALUE

    /**
     * Replaces the entries with {@code n} entries {@code (expiries[j], weights[j])}; the expiries strictly
     * increasing, the weights positive.
     */
    final void restore(long[] expiries, long[] weights, int n) {
        int pairs = 1;
        while (pairs < n) {
            pairs *= 2;
        }
        ring = n == 0 ? EMPTY : new long[2 * pairs];
        head = 0;
        size = n;
        total = 0;
        for (int j = 0; j < n; j++) {
            ring[2 * j] = expiries[j];
            ring[2 * j + 1] = weights[j];
            total = ExactMath.saturatedAdd(total, weights[j]);
        }
    }

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
        int before = size;
        long expired = 0;
        while (size > 0 && expiry(head) <= now) {
            expired += weight(head); // may wrap when the total has saturated; then it is not used
            head = (head + 1) & (capacity() - 1);
            size--;
        }
        if (size != before) {
            subtract(expired);
        }
        if (capacity() > 8 && size < capacity() / 4) {
            resize(capacity() / 2);
        }
    }

    private void append(long expiresAt, long cost) {
        if (size > 0 && newest() >= expiresAt) { // same instant or sub-window (or a clock stepped back)
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

    /**
     * Takes {@code w}, just removed from the entries, off the total. A saturated total no longer knows the sum it
     * stands for: it is counted again from the entries, so it never falls below what they still hold.
     */
    private void subtract(long w) {
        if (total == Long.MAX_VALUE) {
            long sum = 0;
            for (int i = 0; i < size; i++) {
                sum = ExactMath.saturatedAdd(sum, weight(at(i)));
            }
            total = sum;
        } else {
            total -= w;
        }
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
        return Decision.denied(p.limit, remaining, reset, untilAtMost(p.limit - cost, now));
    }

    /**
     * Time until the live entries hold at most {@code target} permits: the expiry of the newest entry that the
     * newer ones, with it, would push past {@code target}. Summed from the newest, never past {@code target}, so
     * it stays exact when the total has saturated.
     */
    private long untilAtMost(long target, long now) {
        long held = 0;
        for (int i = size - 1; i >= 0; i--) {
            long w = weight(at(i));
            if (w > target - held) {
                return expiry(at(i)) - now;
            }
            held += w;
        }
        return 0;
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
                dropEmptyEnds();
                subtract(back);
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

    /** {@code [total, expiresAt₀, weight₀, expiresAt₁, weight₁, …]}, oldest entry first. */
    @Override
    public long[] snapshot() {
        long[] s = new long[1 + 2 * size];
        s[0] = total;
        for (int i = 0; i < size; i++) {
            int slot = at(i);
            s[1 + 2 * i] = expiry(slot);
            s[2 + 2 * i] = weight(slot);
        }
        return s;
    }

    /**
     * The entries of positive weight as pairs {@code [expiresAt₀ − offset, weight₀, …]}, oldest first: what
     * {@link #snapshot()} holds, less the total, shifted, in one array.
     */
    final long[] pairs(long offset) {
        int n = 0;
        for (int i = 0; i < size; i++) {
            if (weight(at(i)) > 0) {
                n++;
            }
        }
        long[] p = new long[2 * n];
        int k = 0;
        for (int i = 0; i < size; i++) {
            int slot = at(i);
            if (weight(slot) > 0) {
                p[k++] = expiry(slot) - offset;
                p[k++] = weight(slot);
            }
        }
        return p;
    }

    static ExpiringLogState restore(ExpiringLogState s, long[] snapshot) {
        if (snapshot == null || snapshot.length % 2 != 1) {
            throw new IllegalArgumentException("a log snapshot has an odd number of numbers, was "
                    + (snapshot == null ? "null" : Arrays.toString(snapshot)));
        }
        int n = snapshot.length / 2;
        if (n > 0) {
            int pairs = n == 1 ? 1 : Integer.highestOneBit(n - 1) << 1;
            s.ring = new long[2 * pairs];
        }
        for (int i = 0; i < n; i++) {
            long e = snapshot[1 + 2 * i];
            long w = snapshot[2 + 2 * i];
            if (w < 0 || (i > 0 && e <= s.ring[2 * (i - 1)])) {
                throw new IllegalArgumentException("a log snapshot holds entries of increasing expiry and weight"
                        + " >= 0, was " + Arrays.toString(snapshot));
            }
            s.ring[2 * i] = e;
            s.ring[2 * i + 1] = w;
        }
        s.size = n;
        s.total = snapshot[0];
        return s;
    }

    @Override
    public long expiresAt(Params p) {
        return size == 0 ? Long.MIN_VALUE : newest();
    }
}
