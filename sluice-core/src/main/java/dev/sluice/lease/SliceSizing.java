package dev.sluice.lease;

import dev.sluice.Algorithm;
import dev.sluice.LimiterConfig;

/**
 * How big the slices of one leased limiter are: the pure policy of leased mode, apart from the bookkeeping of leases
 * and the calls to the store. Numbers in, numbers out; immutable.
 *
 * <p>Everything is sized by demand, the cost offered here per interval (the last interval's, or this one's so far if
 * more). A claim on a request asks for what this instance expects to need before the next round, at least what the
 * request needs; a contended key (a request refused here in this interval or the last) only for a short horizon, so
 * that slices do not sit unused in some instances while others are refused. A claim is worth a round trip only if the
 * store, as last read, has at least {@link #minClaim} room (for a contended sliding tail, {@link #contendedClaim}, up
 * to twice that for an instance whose claims keep winning or that holds its share among the demands noted, and no more
 * than the window frees before the frame ends). A round claims ahead, for each frame starting before the
 * next round, {@link #aheadSlice} of the demand expected in it, and for a key whose demand recurs ({@link #keeps})
 * tops up the slice of the current frame to as much ({@link #topUp}). A sub-window counter key asked less than about
 * once per sub-window takes one span over those frames instead of a slice in each ({@link #spans}).
 */
final class SliceSizing {

    /**
     * How many intervals a key whose demand recurs keeps its slice after its last request, with the round topping it
     * up: a key asked again within that many intervals (a sparse key, asked less than once per interval) finds its next request
     * covered from memory instead of claiming on it. The cost: up to {@link #aheadSlice aheadSlice(1)} permits held
     * unused, this many intervals after a key's last request, within the lower half of the limit.
     */
    static final int SPARSE_ROUNDS = 4;

    /**
     * The requests a span must expect to be claimed ({@link #spans}): claiming it takes a write, and giving it back
     * unused another, where each request it covers would otherwise claim on its own (one call). A key asked once in an
     * interval may well not be asked in the next.
     */
    static final double SPAN_DEMAND = 2;

    /** Requests arriving at random at this rate per frame leave a frame empty as often as not ({@code e^-ln2 = 1/2}). */
    private static final double LN_2 = Math.log(2);

    private final long roundNanos;
    private final long frameNanos;
    /** The permits the window frees in a tenth of an interval: a claim on a request is made only if it can get as many. */
    final long minClaim;
    /**
     * The shorter of an interval and a tenth of the window: what a claim of a contended key is sized for, and how long
     * a claim that found too little room stops further claims.
     */
    final long shortHorizon;
    /**
     * The room a contended key waits for before it claims on a request: for the sliding tail, the permits the window
     * frees in a {@link #shortHorizon}, the span such a key's claims are sized for; for the other algorithms, whose
     * room does not grow within a frame, {@link #minClaim}.
     */
    final long contendedClaim;

    private final long limit;
    private final long windowNanos;
    private final boolean slidingTail;
    /**
     * Whether rounds are more than a tenth of the window apart: a slice claimed ahead and left unused is then held,
     * until the next round gives it back, for longer than the window can spare.
     */
    final boolean longRounds;

    /** The sizing of a limiter with {@code config} whose frames are {@code frameNanos} long, rounds {@code roundNanos} apart. */
    SliceSizing(LimiterConfig config, long frameNanos, long roundNanos) {
        long window = config.windowNanos();
        this.limit = config.limit();
        this.windowNanos = window;
        this.slidingTail = config.algorithm() == Algorithm.SLIDING_TAIL;
        this.roundNanos = roundNanos;
        this.frameNanos = frameNanos;
        this.minClaim = Math.max(1, (long) ((double) config.limit() * Math.min(roundNanos / 10, window) / window));
        this.shortHorizon = Math.max(1, Math.min(roundNanos, window / 10));
        this.contendedClaim = config.algorithm() != Algorithm.SLIDING_TAIL
                ? minClaim
                : Math.max(1, (long) ((double) config.limit() * shortHorizon / window));
        this.longRounds = roundNanos > window / 10;
    }

    /**
     * The permits this instance expects to be asked for in the current frame before the next round: {@code
     * perInterval} times the part of an interval the frame has left ({@code untilFrameEnds}), or for a {@code
     * contended} key the part of the {@link #shortHorizon}. When the limit is shared by more demand than it admits, a
     * slice sized for a whole interval would be left partly unused by the end of the window in some instances while
     * others are refused.
     */
    long expected(long perInterval, boolean contended, long untilFrameEnds) {
        long horizon = Math.min(contended ? shortHorizon : roundNanos, untilFrameEnds);
        return (long) Math.ceil((double) perInterval * horizon / roundNanos); // a size, not a count: rounding is fine
    }

    /**
     * The room the store must have, as last read, for a claim on a request to be worth a round trip, besides what the
     * request needs: {@link #minClaim}, or for a {@code contended} key {@link #contendedClaim} raised by up to as much
     * again for an instance whose claims won ({@code winSixteenths} of 16), so that those refused meanwhile claim
     * first; for a contended sliding tail never more than the window frees in the {@code untilFrameEnds} left of its
     * frame (at least 1); never more than the {@code expected} demand. A sliding tail's room frees a little at a time,
     * and what has freed but is not claimed when its window ends is not admitted in that window: waiting near the end
     * for a bar that will not free in time left up to a bar's worth (a tenth of the limit, twice that for a winner)
     * unused in every window. With the bar cut to what still frees, the claims near a window's end come at halving
     * spans (a few more calls per window) and leave about a permit. A contended sliding tail that already
     * {@linkplain #holdsItsShare holds its share} of the frame ({@code beyondShare}) waits for twice
     * {@link #contendedClaim} at least, so that the instances short of theirs, whose bar is lower, claim what frees
     * first.
     */
    long worth(boolean contended, int winSixteenths, boolean beyondShare, long expected, long untilFrameEnds) {
        if (!contended) {
            return Math.min(minClaim, expected);
        }
        long bar = contendedClaim + contendedClaim * winSixteenths / 16;
        if (slidingTail && beyondShare) {
            bar = Math.max(bar, 2 * contendedClaim);
        }
        if (slidingTail) {
            bar = Math.min(bar, Math.max(1, (long) ((double) limit * untilFrameEnds / windowNanos)));
        }
        return Math.min(bar, expected);
    }

    /**
     * Whether a key whose demand is {@code recurring} ({@link Lease#recurring}), {@code quietRounds} rounds past the
     * last one that found it asked, still counts as asked: it keeps
     * its slice, and the round tops it up and claims its next frames ahead as for at least one request per interval
     * ({@link #demandAhead}). Not with rounds more than a tenth of the window apart: a slice held that long is worth
     * more to the other instances than the claim it saves ({@link #aheadDemand}).
     */
    boolean keeps(boolean recurring, int quietRounds) {
        return recurring && !longRounds && quietRounds < SPARSE_ROUNDS;
    }

    /**
     * Whether the round, after an interval without a request here, keeps the slice of the current frame to its end
     * rather than giving it back, the frame ending {@code untilFrameEnds} from now: a sub-window (a frame shorter than
     * the window) that ends within the {@link #shortHorizon}, at the latest by the next round. Such a slice was claimed
     * ahead for this very frame by the round before, from the demand of the interval before that: giving it back at
     * the frame's start costs a write, and the frame's next request a claim of its own, where keeping it holds it from
     * the others for at most an interval and a tenth of the window.
     */
    boolean holdsToFrameEnd(long untilFrameEnds) {
        return frameNanos < windowNanos && untilFrameEnds <= shortHorizon;
    }

    /**
     * The demand per interval the round keeps, tops up and claims ahead for: the last interval's ({@code
     * perInterval}), at least one request for a key it keeps ({@code kept}: see {@link #keeps}).
     */
    static long demandAhead(long perInterval, boolean kept) {
        return kept ? Math.max(1, perInterval) : perInterval;
    }

    /**
     * The most of a slice the round leaves unused with {@code expected} requests expected per interval: twice that,
     * and at least the slice a top-up gives ({@link #topUp}), so that the next round does not give it back.
     */
    static long keptUnused(long expected) {
        return Math.max(2 * expected, aheadSlice((double) expected));
    }

    /**
     * The permits the round adds to the slice of the current frame, with {@code left} of it unused and the frame
     * lasting {@code untilFrameEnds} more: for a frame that outlasts the next round, when what is left is less than
     * the demand expected before that round ({@code perInterval}, at least one request), enough to make it the
     * {@linkplain #aheadSlice slice} a frame claimed ahead would get; else 0. So a key asked at a steady rate, or
     * sparsely, finds its slice filled by the round's batched write rather than claiming on a request.
     */
    long topUp(long perInterval, long left, long untilFrameEnds) {
        if (perInterval <= 0 || untilFrameEnds < roundNanos || left >= perInterval) {
            return 0;
        }
        return Math.max(0, aheadSlice((double) perInterval) - left);
    }

    /** The claim of a request that needs {@code need} beyond its slice: the expected demand, at least the need. */
    static long claim(long need, long expected) {
        return Math.max(need, expected);
    }

    /**
     * The most a claim of a request that needs {@code need} beyond its slice may take of the {@code room} left, where
     * other contending instances noted a demand of {@code others} in all and this one has {@code mine}: its demand's
     * share of the room, rounded up, and at least the need. With no other demand noted, the whole room. The first of
     * ten instances asking for more than a limit of 50 takes 5, the next 5 of the 45 left, then 4 of 40, and so on:
     * the room goes round the instances in their order of asking, not to the first.
     */
    static long fairShare(long need, long room, long mine, long others) {
        if (others <= 0 || room <= 0) {
            return Math.max(need, room);
        }
        long m = Math.max(1, mine);
        long share = (long) Math.ceil((double) room * m / ((double) m + others) - 1e-9);
        return Math.max(need, Math.min(room, share));
    }

    /**
     * Whether an instance granted {@code granted} of the current frame holds its demand's share of the {@code limit}:
     * its demand {@code mine} over all the demand noted, with the other instances' {@code others}, rounded down, at
     * least 1. False with no other demand noted. With ten instances noting the same demand and a limit of 50, each
     * holds its share once granted 5; with thirty, once granted 1.
     */
    static boolean holdsItsShare(long limit, long granted, long mine, long others) {
        if (others <= 0) {
            return false;
        }
        double m = Math.max(1, mine);
        long share = Math.max(1, (long) ((double) limit * m / (m + (double) others)));
        return granted >= share;
    }

    /**
     * The demand expected in one frame claimed ahead, from the demand {@code perInterval}: scaled to the shorter of an
     * interval and a frame (what a claim at the start of that frame expects); 0 when nothing should be claimed ahead,
     * that is with rounds more than a tenth of the window apart for a frame expected to see fewer than ln 2 requests,
     * which is more likely to pass empty than not, its slice held unused until the next round.
     */
    double aheadDemand(long perInterval) {
        double perFrame = (double) perInterval * Math.min(roundNanos, frameNanos) / roundNanos;
        return longRounds && perFrame < LN_2 ? 0 : perFrame;
    }

    /**
     * Whether a round claims ahead one span over the {@code aheadFrames} frames that start before the next round (of
     * {@code perWindow} frames to a window) rather than a slice per frame, for a key asked {@code perInterval} times
     * per interval, {@code perFrame} per frame ({@link #aheadDemand}; 0 where no frame is worth a slice): where there
     * are two frames or more and no more than a window's (a span is charged at its two ends, which keeps the record
     * from counting less than was admitted only in windows that hold one of them), the span would see at least {@link #SPAN_DEMAND} requests, and its
     * slice, counted twice, holds less of the record than a slice in every frame would. That is a key asked less than
     * about once per frame: a slice per frame is at least one permit each, most of them unused.
     */
    boolean spans(long perInterval, double perFrame, int aheadFrames, long perWindow) {
        if (aheadFrames < 2 || aheadFrames > perWindow) {
            return false; // one frame; or more than a window's, which one span cannot cover
        }
        double demand = spanDemand(perInterval, aheadFrames);
        if (demand < SPAN_DEMAND) {
            return false;
        }
        double perFrames = perFrame <= 0 ? Double.MAX_VALUE : (double) aheadFrames * aheadSlice(perFrame);
        return 2.0 * aheadSlice(demand) < perFrames;
    }

    /**
     * The demand expected over a span of {@code frames} frames, from the demand {@code perInterval}: scaled to the
     * span, at most an interval. A frame is the window over the sub-windows rounded down to a nanosecond, so the frames
     * of an interval may add up to a few nanoseconds less than it: they count as the whole interval.
     */
    double spanDemand(long perInterval, long frames) {
        long spanNanos = frames * frameNanos + frames;
        return (double) perInterval * Math.min(roundNanos, spanNanos) / roundNanos;
    }

    /**
     * The slice claimed ahead for a frame where {@code expected} permits are expected: that plus twice its square root,
     * rounded up. Requests arriving at random (Poisson) at that rate pass the slice in about one frame in forty, so
     * a frame rarely needs a claim of its own on a request; a claim sized exactly by the last interval's demand would
     * fall short in every other frame. At least 1.
     */
    static long aheadSlice(double expected) {
        return Math.max(1, (long) Math.ceil(expected + 2 * Math.sqrt(expected) - 1e-9));
    }
}
