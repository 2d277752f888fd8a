package dev.sluice.server.replay;

import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Limit;
import dev.sluice.policy.Policies;
import dev.sluice.policy.Rule;
import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a replay found, from the {@link Replayer}s that decided its parts ({@link Partitions}): the totals summed, and
 * one row per rule and key. A row is counted by one part, since the part is picked by a value every counter of its rule
 * is kept per; only a row of a rule with no counted limit can be counted by several (its descriptor lacks that key,
 * and the request's other descriptors picked the part), and it is summed here. What is printed is sorted, so it does
 * not depend on which part counted what.
 */
final class Replayed {
    private final Policies policies;
    private final List<Replayer> parts;
    private final List<Row> rows;
    /** How the requests were split between threads, or why not. */
    final String decidedBy;

    final long lines;
    final long requests;
    final long allowedRequests;
    final long deniedRequests;
    final long wouldDenyRequests;
    final long shadowBannedRequests;
    final long unmatched;
    final long firstTime;
    final long lastTime;
    final Map<BadLine.Problem, Long> badCounts = new EnumMap<>(BadLine.Problem.class);
    final List<BadLine> badKept = new ArrayList<>();

    /**
     * @param parts the parts, each done deciding; the first also counted the log's bad lines
     */
    Replayed(Policies policies, List<Replayer> parts, long lines, String decidedBy) {
        this.policies = policies;
        this.parts = List.copyOf(parts);
        this.lines = lines;
        this.decidedBy = decidedBy;
        long requests = 0;
        long allowed = 0;
        long denied = 0;
        long wouldDeny = 0;
        long shadowBanned = 0;
        long unmatched = 0;
        long first = Long.MAX_VALUE;
        long last = Long.MIN_VALUE;
        for (Replayer p : parts) {
            requests += p.requests;
            allowed += p.allowedRequests;
            denied += p.deniedRequests;
            wouldDeny += p.wouldDenyRequests;
            shadowBanned += p.shadowBannedRequests;
            unmatched += p.unmatched;
            first = Math.min(first, p.firstTime);
            last = Math.max(last, p.lastTime);
            p.badCounts.forEach((k, v) -> badCounts.merge(k, v, Long::sum));
            badKept.addAll(p.badKept);
        }
        this.requests = requests;
        this.allowedRequests = allowed;
        this.deniedRequests = denied;
        this.wouldDenyRequests = wouldDeny;
        this.shadowBannedRequests = shadowBanned;
        this.unmatched = unmatched;
        this.firstTime = first;
        this.lastTime = last;
        this.rows = parts.size() == 1 ? parts.get(0).rows() : merge(parts);
    }

    private static List<Row> merge(List<Replayer> parts) {
        Map<String, Map<Descriptor, Row>> byDomain = new HashMap<>();
        List<Row> rows = new ArrayList<>();
        IdentityHashMap<Row, Integer> at = new IdentityHashMap<>(); // a kept row's place in rows
        IdentityHashMap<Row, Boolean> copies = new IdentityHashMap<>();
        for (Replayer p : parts) {
            for (Row row : p.rows()) {
                Map<Descriptor, Row> seen = byDomain.computeIfAbsent(row.domain, d -> new HashMap<>());
                Row kept = seen.get(row.descriptor);
                if (kept == null) {
                    seen.put(row.descriptor, row);
                    at.put(row, rows.size());
                    rows.add(row);
                    continue;
                }
                if (counts(row.rule)) {
                    throw new IllegalStateException("the row of " + row.domain + " " + row.key() + " under "
                            + row.rule.path() + " was counted by two parts, though its rule counts");
                }
                if (!copies.containsKey(kept)) { // a part's row is never changed: sum into a copy
                    Row copy = new Row(-1, kept.domain, kept.rule, kept.descriptor, Row.windows(kept.rule));
                    copy.add(kept);
                    int place = java.util.Objects.requireNonNull(at.get(kept), "a kept row has its place");
                    rows.set(place, copy);
                    at.put(copy, place);
                    seen.put(row.descriptor, copy);
                    copies.put(copy, Boolean.TRUE);
                    kept = copy;
                }
                kept.add(row);
            }
        }
        return rows;
    }

    Policies policies() {
        return policies;
    }

    /** The rows of every part. */
    List<Row> rows() {
        return rows;
    }

    /** The parts, each with the rows it counted and its spilled requests. */
    List<Replayer> parts() {
        return parts;
    }

    long badLines() {
        long n = 0;
        for (long c : badCounts.values()) {
            n += c;
        }
        return n;
    }

    /** Whether {@code rule} has a limit that counts (is not unlimited): its rows are counted by one part each. */
    static boolean counts(Rule rule) {
        for (Limit l : rule.limits()) {
            if (!l.unlimited()) {
                return true;
            }
        }
        return false;
    }

    /** Reads every part's spilled requests, part by part, each part's in time order, naming the part's own row. */
    void readSpill(RowVisitor visitor) throws IOException {
        for (Replayer p : parts) {
            List<Row> partRows = p.rows();
            p.readSpill((row, time, hits) -> visitor.request(partRows.get(row), time, hits));
        }
    }

    /** What {@link #readSpill} gives, request by request. */
    interface RowVisitor {
        void request(Row row, long timeMillis, long hits);
    }
}
