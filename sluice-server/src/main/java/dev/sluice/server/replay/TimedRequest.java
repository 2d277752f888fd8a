package dev.sluice.server.replay;

import dev.sluice.policy.Descriptor;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One request of a log, as {@link LogReader} reads it: when it was made, and the {@code /json} request it was (its
 * domain, descriptors and hits). Immutable.
 *
 * <p>Equal descriptors read from one log are often the very same {@link Descriptor} objects, so that a policy limiter
 * finds their resolution at once; nothing depends on it.
 */
public final class TimedRequest {
    private final long timeMillis;
    private final String domain;
    private final List<Descriptor> descriptors;
    private final long hits;
    /** One cost per descriptor when some descriptor has its own {@code hits_addend}; else null. */
    private final long @Nullable [] descriptorHits;

    /** Per descriptor, its number among the log's descriptors, or -1; shared between requests, never written. */
    private final int[] descriptorIds;

    private final long line;

    TimedRequest(
            long timeMillis,
            String domain,
            List<Descriptor> descriptors,
            long hits,
            long @Nullable [] descriptorHits,
            int[] descriptorIds,
            long line) {
        this.timeMillis = timeMillis;
        this.domain = domain;
        this.descriptors = descriptors;
        this.hits = hits;
        this.descriptorHits = descriptorHits;
        this.descriptorIds = descriptorIds;
        this.line = line;
    }

    /** When the request was made, in epoch milliseconds. */
    public long timeMillis() {
        return timeMillis;
    }

    /** The rate limit domain; never empty. */
    public String domain() {
        return domain;
    }

    /** The descriptors, in order; at least one, each with at least one entry. */
    public List<Descriptor> descriptors() {
        return descriptors;
    }

    /**
     * The cost of descriptor {@code i}: its own {@code hits_addend} if the line gave one, else the request's
     * ({@code hits_addend}, 1 when absent or 0, as the service reads it).
     */
    public long hits(int i) {
        long[] d = descriptorHits;
        return d == null ? hits : d[i];
    }

    /** Whether every descriptor costs {@link #hits()}: no descriptor has a {@code hits_addend} of its own. */
    public boolean uniformHits() {
        return descriptorHits == null;
    }

    /** The request's cost ({@code hits_addend}, at least 1), which descriptors without their own take. */
    public long hits() {
        return hits;
    }

    /** A new array of the cost of each descriptor, as {@code PolicyLimiter.check(domain, descriptors, long[])} takes. */
    public long[] hitsArray() {
        long[] d = descriptorHits;
        if (d != null) {
            return d.clone();
        }
        long[] all = new long[descriptors.size()];
        java.util.Arrays.fill(all, hits);
        return all;
    }

    /**
     * Per descriptor, its number among the distinct descriptors of the log, dense from 0 in the order the reader first
     * saw them, or -1 when the reader keeps no number for it (past the most it keeps). Equal numbers, equal
     * descriptors. The array is shared: not to be written.
     */
    int[] descriptorIds() {
        return descriptorIds;
    }

    /** The line of the log it was read from, counting from 1 (the header of a CSV log is line 1). */
    public long line() {
        return line;
    }

    @Override
    public String toString() {
        return "TimedRequest[line " + line + ", " + timeMillis + " ms, " + domain + " " + descriptors
                + (descriptorHits == null ? " hits " + hits : " hits " + java.util.Arrays.toString(descriptorHits))
                + "]";
    }
}
