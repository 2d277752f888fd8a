package dev.sluice.server.replay;

import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Rule;

/**
 * What a replay counted for one key of one rule: the requests whose descriptor ({@link #descriptor}) matched
 * {@link #rule}, and what became of them. Not thread-safe.
 */
final class Row {
    /**
     * Its number among the rows of the part that counted it, in the order first seen: how that part's spilled requests
     * name it. -1 for a sum of rows of several parts ({@link Replayed}).
     */
    final int id;

    final String domain;
    final Rule rule;
    final Descriptor descriptor;

    long requests;
    long hits;
    /** Requests the service would have let through (the whole request: every limit of every descriptor passed). */
    long allowed;
    /** Requests an enforced limit of this rule refused. */
    long denied;
    /** Requests a dry-run limit of this rule would have refused. */
    long wouldDeny;
    /** Requests a shadow-ban limit of this rule refused (answered OK, work to be dropped). */
    long shadowBanned;
    /** Per limit of the rule: the requests it refused (enforced, shadow-ban or dry-run). */
    final long[] refusedBy;
    /** Per limit: its window in ms, 0 when unlimited. */
    private final long[] windowMillis;
    /**
     * Per limit, four longs side by side (one cache line for a rule of one limit): where the epoch-aligned window being
     * counted starts and ends (ms), its hits, and the most hits of any window.
     */
    private final long[] windows;
    /** Per limit: the smallest limit under which it refuses none of this key's requests; 0 until computed. */
    final long[] needed;

    /**
     * @param windowMillis per limit of the rule, its window in ms (0 when unlimited): {@link #windows(Rule)}, shared by
     *                     the rule's rows
     */
    Row(int id, String domain, Rule rule, Descriptor descriptor, long[] windowMillis) {
        this.id = id;
        this.domain = domain;
        this.rule = rule;
        this.descriptor = descriptor;
        int n = rule.limits().size();
        this.refusedBy = new long[n];
        this.windows = new long[4 * n];
        this.needed = new long[n];
        this.windowMillis = windowMillis;
        for (int j = 0; j < n; j++) { // no time is in [MAX, MIN): the first starts a window
            windows[4 * j] = Long.MAX_VALUE;
            windows[4 * j + 1] = Long.MIN_VALUE;
        }
    }

    /** Per limit of {@code rule}, its window in ms; 0 for an unlimited limit. */
    static long[] windows(Rule rule) {
        long[] w = new long[rule.limits().size()];
        for (int j = 0; j < w.length; j++) {
            java.time.Duration d = rule.limits().get(j).window();
            w[j] = d == null ? 0 : Math.max(1, d.toMillis());
        }
        return w;
    }

    /** Counts {@code hits} at {@code timeMillis} in the window of each limit, for {@link #peak}. */
    void count(long timeMillis, long cost) {
        requests++;
        hits += cost;
        long[] s = windows;
        for (int j = 0, at = 0; j < windowMillis.length; j++, at += 4) {
            long w = windowMillis[j];
            if (w == 0) {
                continue; // unlimited
            }
            if (timeMillis >= s[at + 1] || timeMillis < s[at]) {
                long start = Math.floorDiv(timeMillis, w) * w;
                s[at] = start;
                s[at + 1] = start + w;
                s[at + 2] = 0;
            }
            long inWindow = s[at + 2] + cost;
            s[at + 2] = inWindow;
            if (inWindow > s[at + 3]) {
                s[at + 3] = inWindow;
            }
        }
    }

    /** The most hits of one epoch-aligned window of limit {@code j}: the peak against its limit; 0 when unlimited. */
    long peak(int j) {
        return windows[4 * j + 3];
    }

    /**
     * Adds the counts of {@code other}, a row of the same rule and key counted apart: requests, hits and outcomes.
     * Only for a rule none of whose limits counts, which has no peaks and no needed limits to add.
     */
    void add(Row other) {
        requests += other.requests;
        hits += other.hits;
        allowed += other.allowed;
        denied += other.denied;
        wouldDeny += other.wouldDeny;
        shadowBanned += other.shadowBanned;
        for (int j = 0; j < refusedBy.length; j++) {
            refusedBy[j] += other.refusedBy[j];
        }
    }

    /** Requests refused by a limit of this rule, in any mode. */
    long refused() {
        return denied + wouldDeny + shadowBanned;
    }

    /** The descriptor's entries as {@code k=v,k=v}, in entry order. */
    String key() {
        StringBuilder b = new StringBuilder();
        for (Descriptor.Entry e : descriptor.entries()) {
            if (b.length() > 0) {
                b.append(',');
            }
            b.append(e.key()).append('=').append(e.value());
        }
        return b.toString();
    }
}
