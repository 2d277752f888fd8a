package dev.sluice.spi;

import dev.sluice.Decision;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The over-limit cache of one shared store in exact mode ({@link SharedStoreBuilder#overLimitCache(int)}): the
 * refusals the store gave, each kept until the instant the store said a request of its cost could pass, so that a
 * request on a key over its limit is refused without a round trip. The counterpart of envoyproxy/ratelimit's
 * {@code LOCAL_CACHE_SIZE_IN_BYTES}, but exact: it refuses only what the store would refuse.
 *
 * <p>Thread-safe. Lookups read one {@link ConcurrentHashMap} per limiter ({@link Table}) without a lock; adding,
 * evicting and dropping entries take the cache's lock, which a key over its limit takes once per store refusal.
 */
final class OverLimitCache {

    /*
     * Why a cached refusal is exact. In Sluice a refused request consumes nothing (a limiter that counts rejections
     * is never cached), and the other requests on a key, here or on any other instance, can only consume more. So
     * when the store refuses a request of cost c on key k at time t with retry-after r, the state of k at any t' in
     * [t, t + r) holds no more room than it would with no request after t, which is not room for c: every request on
     * k of cost >= c before t + r is refused too. The store itself cannot answer otherwise (each algorithm's
     * retry-after is the earliest instant, to the nanosecond, at which its admission test passes with no further
     * request), so the cache answers what the store would: refused, remaining 0 (exact for a cost of 1, the
     * Envoy default; for a larger cost the store's remaining is somewhere below the cost), the retry-after and
     * reset-after counted down from the instants the store gave. A smaller cost, or the retry instant reached, goes to
     * the store again.
     *
     * Time. The instant t is read from the limiter's own clock (LimiterConfig#clockNanos, hand-moved in tests) just
     * before the store call, and the entry expires at t + r on that clock. With TimeSource.CLOCK the store decided at
     * exactly t. With TimeSource.STORE it decided at some instant of its own clock between the call's sending and its
     * answer, never before t: the cache's t + r comes no later than the store's, so it never refuses past it.
     *
     * What gives capacity back breaks the premise, and each case is handled:
     *  - a reservation cancelled here, or a joint request's take-and-give-back here (across stores, or on a store
     *    that cannot take its keys in one call): the limiter gives back through SharedLimiter#giveBack, which drops
     *    the key's entry after the store took the permits back. A refusal decided while the permits were held (and
     *    cached after the give-back) is caught by the table's give-back count: read before the store call, compared
     *    after the entry is added, and the entry dropped again if it moved (see Table#refused);
     *  - a reload that changes a rule: the policy layer builds a limiter per limit shape, so a changed limit is a new
     *    limiter with an empty table, and the limiter replaced is closed, which drops its entries (Table#clear);
     *  - capacity given back elsewhere: a reservation cancelled or a take-and-give-back on another instance, a key
     *    deleted in the store (FLUSHDB, a failover to a replica behind, an operator), or a store clock set back. This
     *    instance cannot see them: it may refuse, until the cached instant and no longer, a request the store would
     *    now admit. A bounded under-admission, never an over-admission.
     * Sluice has no reset or admin call that writes counts; one added must clear the cache.
     *
     * Example: a fixed window of 5/min, TimeSource.CLOCK, the sixth request at 12:00:40 is refused with retry-after
     * 20 s; requests of cost >= 1 until 12:00:59.999999999 are refused from the cache, the request at 12:01:00 goes to
     * the store (and passes: a new window). A request of cost 3 refused at 12:00:10 (with 2 left) caches cost 3: a
     * request of cost 1 at 12:00:11 still goes to the store.
     *
     * Bound. At most maxEntries entries across the store's limiters, in the order they were added: a refusal of a
     * key not cached evicts the entry added first, expired or not (an expired entry is only a store call saved no
     * more). An entry is about 250 bytes with a key of 40 characters (a hash map node in each of the two maps, the
     * order's key, the entry, and the key string it keeps alive; SharedStoreBuilder#OVER_LIMIT_CACHE_ENTRY_BYTES),
     * which is how the service turns LOCAL_CACHE_SIZE_IN_BYTES into entries.
     */

    private final int maxEntries;
    /** Every entry, in the order added. Guarded by {@code this}. */
    private final LinkedHashMap<Slot, Entry> order = new LinkedHashMap<>();

    OverLimitCache(int maxEntries) {
        if (maxEntries < 1) {
            throw new IllegalArgumentException("maxEntries must be > 0, was " + maxEntries);
        }
        this.maxEntries = maxEntries;
    }

    /** A new table for one limiter's keys. */
    Table table() {
        return new Table();
    }

    /** How many entries the cache holds, expired or not. */
    synchronized int size() {
        return order.size();
    }

    /** Where an entry sits in {@link #order}: its table and key. */
    private record Slot(Table table, String key) {}

    /** A refusal of the store: of {@code cost} at least, until {@code untilNanos}, on the limiter's clock. */
    private record Entry(long cost, long untilNanos, long resetAtNanos, long limit) {}

    /** One limiter's entries by key. */
    final class Table {
        /** Written under the cache's lock, read without it. */
        private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
        /** Give-backs on this limiter so far. */
        private final AtomicLong giveBacks = new AtomicLong();

        private Table() {}

        /**
         * The refusal of a request of {@code cost} on {@code key} at {@code nowNanos} if the cache holds one: the
         * store refused {@code cost} or less there, and its retry instant is after {@code nowNanos}. Null otherwise.
         */
        @Nullable
        Decision refusal(String key, long cost, long nowNanos) {
            Entry e = entries.get(key);
            if (e == null || cost < e.cost || nowNanos - e.untilNanos >= 0) {
                return null;
            }
            long retry = e.untilNanos - nowNanos;
            long reset = Math.max(retry, e.resetAtNanos - nowNanos);
            return Decision.fromOverLimitCache(Decision.denied(e.limit, 0, reset, retry));
        }

        /** The give-back count, to read before a store call whose refusal may be cached. */
        long giveBacks() {
            return giveBacks.get();
        }

        /**
         * Keeps the store's refusal {@code d} of {@code cost} on {@code key}, asked at {@code atNanos} on the limiter's
         * clock, unless a give-back on this limiter came after {@code giveBacksBefore} was read: then the refusal may
         * have seen permits held for that moment only. A give-back that comes after the check takes the lock after
         * this added the entry, and drops it ({@link #gaveBack}).
         */
        void refused(String key, long cost, Decision d, long atNanos, long giveBacksBefore) {
            if (d.allowed() || d.failed() || d.cached()) {
                return;
            }
            Entry e = new Entry(cost, atNanos + d.retryAfterNanos(), atNanos + d.resetAfterNanos(), d.limit());
            Slot slot = new Slot(this, key);
            synchronized (OverLimitCache.this) {
                if (giveBacks.get() != giveBacksBefore) {
                    return;
                }
                order.remove(slot); // a new refusal of a key goes to the end of the order
                order.put(slot, e);
                entries.put(key, e);
                if (order.size() > maxEntries) {
                    Iterator<Map.Entry<Slot, Entry>> oldest = order.entrySet().iterator();
                    Slot evicted = oldest.next().getKey();
                    oldest.remove();
                    evicted.table.entries.remove(evicted.key);
                }
            }
        }

        /**
         * Permits of {@code key} were given back (after the store took them back): drops its entry, and keeps any
         * refusal decided before now from being added.
         */
        void gaveBack(String key) {
            giveBacks.incrementAndGet();
            synchronized (OverLimitCache.this) {
                if (order.remove(new Slot(this, key)) != null) {
                    entries.remove(key);
                }
            }
        }

        /** Drops every entry of this table: its limiter is closed. */
        void clear() {
            synchronized (OverLimitCache.this) {
                order.keySet().removeIf(s -> s.table == this);
                entries.clear();
            }
        }

        /** The entries this table holds, expired or not. */
        int size() {
            return entries.size();
        }
    }
}
