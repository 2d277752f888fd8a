package dev.sluice.lease;

import dev.sluice.internal.FrameCounts;
import dev.sluice.internal.FrameMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The demands of the instances contending for a key, kept in the key's record beside its frames, so that a claim on a
 * contended key takes its demand's share of the room left rather than whatever it finds (see "Fair shares" in
 * docs/leased-mode.md).
 *
 * <p>A note is one entry of the record in the range {@link FrameMap#NOTES_FROM} to {@link FrameMap#NOTES_TO}: its
 * key is {@code NOTES_FROM + (lapse << 22 | tag)}, where {@code lapse} is the time the note stops counting in
 * hundredths of a second since the epoch (39 bits: until the year 2144) and {@code tag} the writing instance's
 * {@linkplain #newTag tag} (22 bits); its count is that instance's demand per window. Every write of a record by
 * this version carries the other instances' notes that have not lapsed and replaces this instance's own; a note
 * lapses on its own, like a slice, so a dead instance's demand stops counting a window and an interval after its last
 * write.
 *
 * <p>To a version without notes such an entry is a frame of the 19th century: it counts in no window, that version
 * drops it at its next write of the record (it writes only the frames that still count), and its claims are not
 * capped. A record without notes (written by such a version, or with no contention) caps nothing: each instance
 * claims as before, first come, first served.
 */
final class DemandNotes {

    private static final int TAG_BITS = 22;
    private static final long TAG_MASK = (1L << TAG_BITS) - 1;
    private static final long UNIT = 10_000_000L; // a hundredth of a second, in nanoseconds
    private static final long MAX_LAPSE = (1L << (61 - TAG_BITS)) - 1;

    /**
     * An odd step, so that adding it again and again visits every value below {@code 2^22} before it comes back (the
     * 22 bits of the fraction of the golden ratio, made odd): tags made one after another in a process lie far apart.
     */
    private static final int TAG_STEP = 0x278DDF;
    /** The last tag this process made, starting from a random one. */
    private static final AtomicInteger LAST_TAG =
            new AtomicInteger(ThreadLocalRandom.current().nextInt(1 << TAG_BITS));

    private DemandNotes() {}

    /**
     * A tag for one instance, never 0: the process's tags go in steps from a random start, so no two instances of one
     * process share one (until {@code 2^22 - 1} have been made) and a run of instances in one process behaves the same
     * whatever the start; two instances in different processes share one with a chance of about {@code 2^-22} per pair
     * (they then read each other's note as their own: the claims of the two are not capped against each other).
     */
    static int newTag() {
        while (true) {
            int tag = LAST_TAG.updateAndGet(t -> (t + TAG_STEP) & (int) TAG_MASK);
            if (tag != 0) {
                return tag;
            }
        }
    }

    /** The key of the note of the instance tagged {@code tag} that lapses at {@code lapseNanos} (rounded up). */
    static long key(int tag, long lapseNanos) {
        long lapse = Math.min(MAX_LAPSE, Math.max(0, Math.floorDiv(lapseNanos, UNIT) + 1));
        return FrameMap.NOTES_FROM + (lapse << TAG_BITS | tag);
    }

    /** The tag of the note {@code key}. */
    static int tag(long key) {
        return (int) ((key - FrameMap.NOTES_FROM) & TAG_MASK);
    }

    /** When the note {@code key} stops counting, in nanoseconds since the epoch. */
    static long lapse(long key) {
        long lapse = (key - FrameMap.NOTES_FROM) >>> TAG_BITS;
        return lapse > Long.MAX_VALUE / UNIT ? Long.MAX_VALUE : lapse * UNIT;
    }

    /** The sum of the demands noted in {@code record} by instances other than {@code tag}, live at {@code now}. */
    static long others(FrameMap record, int tag, long now) {
        long sum = 0;
        for (int j = 0; j < record.size(); j++) {
            long k = record.frame(j);
            if (k >= FrameMap.NOTES_TO) {
                break; // notes come first: their keys are below every frame's
            }
            if (othersLive(k, tag, now)) {
                sum = Math.min(Long.MAX_VALUE / 2, sum + record.count(j));
            }
        }
        return sum;
    }

    /** How many instances other than {@code tag} noted a demand in {@code record} that is live at {@code now}. */
    static int othersNoting(FrameMap record, int tag, long now) {
        int n = 0;
        for (int j = 0; j < record.size(); j++) {
            long k = record.frame(j);
            if (k >= FrameMap.NOTES_TO) {
                break;
            }
            if (othersLive(k, tag, now)) {
                n++;
            }
        }
        return n;
    }

    /** Whether the record entry {@code key} is a note of an instance other than {@code tag}, live at {@code now}. */
    private static boolean othersLive(long key, int tag, long now) {
        return FrameMap.isNote(key) && tag(key) != tag && lapse(key) > now;
    }

    /** Whether {@code record} holds a note of the instance tagged {@code tag} that is still live at {@code until}. */
    static boolean holds(FrameMap record, int tag, long until) {
        for (int j = 0; j < record.size(); j++) {
            long k = record.frame(j);
            if (k >= FrameMap.NOTES_TO) {
                return false;
            }
            if (FrameMap.isNote(k) && tag(k) == tag && lapse(k) > until) {
                return true;
            }
        }
        return false;
    }

    /**
     * Puts into {@code counts}, the record to write, the notes of {@code record} by instances other than {@code tag}
     * that are live at {@code now}, and, if {@code demand > 0}, this instance's note of it lapsing at
     * {@code lapseNanos}.
     */
    static void carry(FrameMap record, FrameCounts counts, int tag, long now, long demand, long lapseNanos) {
        for (int j = 0; j < record.size(); j++) {
            long k = record.frame(j);
            if (k >= FrameMap.NOTES_TO) {
                break;
            }
            if (othersLive(k, tag, now)) {
                counts.put(k, record.count(j));
            }
        }
        if (demand > 0) {
            counts.put(key(tag, lapseNanos), demand);
        }
    }
}
