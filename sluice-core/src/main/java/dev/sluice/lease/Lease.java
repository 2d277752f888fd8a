package dev.sluice.lease;

import dev.sluice.algorithm.AlgorithmState;
import dev.sluice.internal.CountedKey;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import java.util.concurrent.CountDownLatch;
import org.jspecify.annotations.Nullable;

/**
 * One key held by one instance: the record as last read or written ({@code global}), the slice this instance holds
 * in the current frame ({@code granted}, of which {@code used} is spent), and the changes still to be written
 * ({@code delta}: unused slices and cancelled permits to give back, rejections to count). Every field but the identity
 * is guarded by this lease's lock ({@link #lock()}), the only lock a decision takes.
 */
final class Lease extends LeaseHead implements CountedKey {

    // ---- read and written by claims, rounds, peeks and the first request of a frame --------------------------------

    /** {@link #spanTo} when no span is held. */
    static final long NO_SPAN = Long.MIN_VALUE;

    final LeasedLimiter limiter;
    final CounterKey id;

    /** The store's record as last read or written here; it counts every instance's slices. */
    CounterSnapshot global = CounterSnapshot.absent();
    /**
     * The frames of {@link #global} in increasing order, and their counts, unboxed: the view is rebuilt from them at
     * every frame a key claimed ahead enters, and walking a map of boxed numbers there cost more than the decision.
     */
    long[] globalFrames = new long[0];

    long[] globalCounts = new long[0];
    /** The latest frame in {@link #global}; {@link Long#MIN_VALUE} if it has none. */
    long globalLast = Long.MIN_VALUE;
    /** Whether {@link #global} has been read or written at least once. */
    boolean read;
    /**
     * How often, in sixteenths, another instance had written the record since this one last read or wrote it, when
     * this one came to write: a moving average over its writes. Above one half, a write reads the record first
     * ({@link #readFirst}).
     */
    int staleSixteenths;
    /**
     * The algorithm's state holding the frames of {@link #global} up to {@link #viewFrame}: the store's measure, for
     * remaining and retry times. Frames claimed ahead (later than the current one) are left out: they do not count yet.
     */
    AlgorithmState view;
    /** The frame {@link #view} was built for; it is built again when a later frame of the record starts. */
    long viewFrame = Long.MIN_VALUE;
    /** The index in {@link #globalFrames} of the first frame after {@link #viewFrame}: where the view goes on from. */
    int viewNext;
    /** Per frame, what to add to the store's counts with the next write: negative to give back, positive to count. */
    final FrameDeltas delta = new FrameDeltas();
    /**
     * Slices the round claimed ahead, for frames after {@link #frame}: the store counts them already. When its frame
     * starts, a slice becomes {@link #granted}; a frame that passes without a request here gives its slice back. Kept
     * as consecutive frames in an array, {@code aheadSlices[aheadHead + i]} for the frame {@code aheadFrom} plus
     * {@code i} frames, {@code i < aheadLen} (zero where none): a key claimed ahead takes one at every frame it enters,
     * and a sorted map per key cost more than the decision.
     */
    long[] aheadSlices = new long[0];

    long aheadFrom;
    int aheadHead;
    int aheadLen;

    /**
     * A span (sub-window counter only): {@link #spanLeft} permits good in any frame from {@link #spanFrom} to
     * {@link #spanTo}, at most a window's frames, claimed by a round (ahead) or by a claim on a request, for a key
     * asked less than about once per frame. The record counts the span's permits at both its first and its last frame, so every window that holds a
     * frame of the span holds at least one of the two, and the record never counts less than was admitted in it. A
     * permit taken is counted in its own frame and, with the next write, no longer at the two ends
     * ({@link #spanTaken}: taken since the last write). {@link #spanTo} is {@link #NO_SPAN} when none is held. A second
     * span, claimed ahead before the first ended, waits in {@code next*}.
     */
    long spanFrom;

    long spanTo = NO_SPAN;
    long spanLeft;
    long spanTaken;
    long nextFrom;
    long nextTo = NO_SPAN;
    long nextLeft;

    /** Cost offered here in the interval before the last round. */
    long lastDemand;
    /**
     * Rounds since the last one that found demand here, up to {@link SliceSizing#SPARSE_ROUNDS} (where it starts: a
     * key only peeked at was never asked): a key asked within that many intervals keeps its slice and has it topped up
     * by the round ({@link SliceSizing#keeps}).
     */
    int quietRounds = SliceSizing.SPARSE_ROUNDS;
    /**
     * Whether the key was asked in two intervals at most {@link SliceSizing#SPARSE_ROUNDS} apart, the last of them
     * within that many rounds: its demand recurs, so the round keeps its slice between requests. A key asked in one
     * interval only (a burst) is not kept.
     */
    boolean recurring;
    /**
     * A claim found too little room: no more claims on requests before this clock time, a round or a new frame.
     * {@link Long#MIN_VALUE} when not starved.
     */
    long starvedUntil = Long.MIN_VALUE;
    /**
     * How often, in sixteenths, this instance's claims on a contended sliding tail found what their request needed: a
     * moving average. The more it wins, the more room it waits for before it claims again
     * ({@link LeasedLimiter#mayClaim}), so that the instances refused meanwhile get to claim first.
     */
    int winSixteenths;
    /** Whether a request was refused since the last round (the round then reads the record, to see room). */
    boolean refused;
    /** Whether a request was refused in the interval before the last round: the key is at its limit here. */
    boolean lastRefused;
    /**
     * The clock time of the last peek here, or of the last round that found demand since the one before (a request
     * admitted from the slice does not write it: the round does, to an interval's precision).
     */
    long lastUsed;
    /**
     * The last write with claims whose call failed, so that it may or may not have been applied; the next read of the
     * record settles it ({@link LeasedLimiter#unknown}). Null if none.
     */
    LeasedLimiter.@Nullable Write doubt;
    /** A call to the store about this key under way (a claim or a round's read or write); others wait for it. */
    @Nullable
    CountDownLatch busy;
    /**
     * Whether {@link #busy} is the round's mark, which the round lifts as soon as its call about this key has ended
     * ({@link LeasedStore#release}): a request's claim clears its own mark itself.
     */
    boolean roundHolds;

    Lease(LeasedLimiter limiter, String key, CounterKey id, AlgorithmState view, long now) {
        super(key);
        this.limiter = limiter;
        this.id = id;
        this.view = view;
        this.lastUsed = now;
    }

    @Override
    public CounterKey id() {
        return id;
    }

    @Override
    public LeasedLimiter limiter() {
        return limiter;
    }

    /**
     * Whether a write should read the record first: another instance has written it more often than not since this
     * one last did. A compare-and-set on a record that changed is refused, and costs three calls (the write, a read,
     * the write again) where reading first costs two. A key that several instances claim turn about is such a key.
     */
    boolean readFirst() {
        return read && staleSixteenths > 8;
    }

    /**
     * Counts one write into {@link #staleSixteenths}: whether another instance had written the record since this one
     * last read or wrote it (weight one quarter).
     */
    void sawStale(boolean stale) {
        staleSixteenths += ((stale ? 16 : 0) - staleSixteenths) / 4;
    }

    /** Adds {@code d} to {@link #delta} at {@code frame}, dropping the entry when it becomes zero. */
    void addDelta(long frame, long d) {
        if (d != 0) {
            delta.add(frame, d);
        }
    }

    /**
     * What the record counts beyond what this instance admitted: the slice left, the slices claimed ahead, the spans,
     * and what it has to give back.
     */
    long unused() {
        long u = granted - used;
        for (int i = 0; i < aheadLen; i++) {
            u += aheadSlices[aheadHead + i];
        }
        // a span's permits are counted twice in the record; those taken since the last write are still at its ends
        return u + delta.givingBack() + 2 * spanLeft + spanTaken + 2 * nextLeft;
    }
}
