package dev.sluice.spi;

import java.util.List;

/**
 * The storage primitives of synchronized mode ({@code dev.sluice.sync.SynchronizedStore}): read a batch of records,
 * and compare-and-set a batch of records by version. Nothing else: the algorithm, the merging of counts and the
 * retry on conflict all live in core, so a store implements only these two calls.
 *
 * <p>A record holds, for one {@link CounterKey}, counts per frame and a version. A record is replaced whole by a
 * {@link CounterWrite} whose expected version matches; every write sets a version the record has never had before
 * (core draws it at random), so a record that expired and was created again never matches a version read before.
 *
 * <p><b>One round trip per call.</b> Each call is one request to the server, whatever its size (a MongoDB
 * {@code find} with {@code $in} and an unordered {@code bulkWrite}, a JDBC batch or one statement over arrays, a Redis
 * pipeline). In one call core passes at most the configured batch size of entries, all of one
 * {@linkplain CounterKey#shape() shape} (a store may keep a shape in a table or collection of its own), and never the
 * same key twice; so a flush of {@code n} dirty keys of one limiter costs {@code ceil(n / batchSize)} calls.
 *
 * <p><b>Failure.</b> A call that fails throws a {@link RuntimeException} (preferably a
 * {@link dev.sluice.SluiceException} wrapping the driver's). A failed {@link #compareAndSet} may have applied any of
 * its writes, or none: core treats each write's outcome as unknown and settles it by reading the record again
 * before it writes that key again. Within a call each write is atomic on its own; the batch need not be.
 *
 * <p>Implementations are thread-safe: several synchronized stores (and several limiters) may share one instance.
 */
public interface CounterStore {

    /**
     * Reads the records of {@code keys}.
     *
     * @param keys at most the batch size, no key twice
     * @return one snapshot per key, in the order of {@code keys}; {@link CounterSnapshot#absent()} for a key without
     *         a record
     */
    List<CounterSnapshot> load(List<CounterKey> keys);

    /**
     * Applies each write whose expected version is the record's current version ({@link CounterSnapshot#ABSENT}:
     * whose record does not exist), and no other, with one allowance: a write that expects a version whose record
     * no longer exists may be applied as a creation (and answered {@code true}) where the store cannot refuse it in
     * the same round trip (a MongoDB upsert). That is safe because a record is deleted only once it has expired,
     * when none of its frames counts any more: the stale frames such a write carries count for nothing, and the
     * counts it adds were admitted by the writer and belong in the store.
     *
     * @param writes at most the batch size, no key twice
     * @return one flag per write, in the order of {@code writes}: {@code true} if it was applied, {@code false} if the
     *         record's version was not the expected one (a conflict: another instance wrote first)
     */
    boolean[] compareAndSet(List<CounterWrite> writes);
}
