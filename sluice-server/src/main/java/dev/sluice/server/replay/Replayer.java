package dev.sluice.server.replay;

import dev.sluice.Algorithm;
import dev.sluice.memory.InMemoryStore;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.DescriptorVerdict;
import dev.sluice.policy.Limit;
import dev.sluice.policy.Outcome;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyLimiter;
import dev.sluice.policy.Rule;
import dev.sluice.policy.Verdict;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A log run through a configuration: every request decided by the policy engine the service uses
 * ({@link PolicyLimiter#check}, in memory) on a clock set to the request's time, and counted per rule and key
 * ({@link Row}). Then, from the requests spilled to a temporary file ({@link Spill}) when something reads them back,
 * the limit each refused key needed ({@link NeededLimit}) and, if asked, a sweep of one rule's limit ({@link Sweep}).
 *
 * <p>What the counts mean. A row is one descriptor (its entries as the request gave them) under the rule it matched.
 * {@code requests}: requests that carried it; {@code allowed}: of those, the ones the service would let through
 * (every limit of every descriptor passed); {@code denied}: the ones an enforced limit of this rule refused;
 * {@code would deny} and {@code shadow-banned}: the ones a dry-run or shadow-ban limit of this rule refused. A request
 * refused by another descriptor's rule is neither allowed nor denied here. The needed limit of a row is for its
 * requests alone under that one limit: the smallest that refuses none of them.
 */
final class Replayer {
    /** How many bad lines are kept in full for the summary; all are counted. */
    static final int BAD_LINES_KEPT = 5;

    /**
     * How long the replay's in-memory store keeps an idle key: its longest. Eviction never changes a decision, so
     * this changes no answer; it spares a log of keys that come and go the removal and re-creation of their state,
     * which the service's default keep of a second would cost on nearly every request of an idle-then-back key.
     * Memory stays within the keys the replay counts rows for anyway.
     */
    static final Duration KEEP_IDLE_KEYS = Duration.ofDays(1);

    private final Policies policies;
    private final VirtualClock clock = new VirtualClock();
    private final PolicyLimiter limiter;
    /** Null when nothing reads the requests back ({@link #Replayer(Policies, int, boolean)}). */
    private final @Nullable Spill spill;

    private final Map<String, Map<Descriptor, Row>> byDomain = new HashMap<>();
    private final List<Row> rows = new ArrayList<>();
    private final Map<Rule, long[]> windows = new HashMap<>(); // a rule has identity equality
    private @Nullable String lastDomain;
    private @Nullable Map<Descriptor, Row> lastRows;
    /** Rows by the number the log reader gave their descriptor ({@link TimedRequest#descriptorIds()}). */
    private @Nullable Row[] byId = new Row[1024];

    long lines;
    long requests;
    long allowedRequests;
    long deniedRequests;
    long wouldDenyRequests;
    long shadowBannedRequests;
    /** Descriptors no rule matched: allowed with no limit, as the service answers them. */
    long unmatched;

    long firstTime = Long.MAX_VALUE;
    long lastTime = Long.MIN_VALUE;
    // bad lines are counted on the thread that reads the log (ReadAhead, Deciders), and read once it has ended
    final Map<BadLine.Problem, Long> badCounts = new EnumMap<>(BadLine.Problem.class);
    final List<BadLine> badKept = new ArrayList<>();

    /** Bytes of log per slot of the policy engine's table of resolutions ({@link #resolutionSlots}). */
    static final int LOG_BYTES_PER_SLOT = 32;

    Replayer(Policies policies) throws IOException {
        this(policies, PolicyLimiter.DEFAULT_RECENT_RESOLUTIONS, true);
    }

    /**
     * @param resolutionSlots the slots of the policy engine's table of resolutions ({@link #resolutionSlots})
     * @param keepRequests    whether to spill the requests for {@link #findNeededLimits} and {@link #readSpill}; a
     *                        replay whose output shows neither needed limits, a sweep nor charts keeps none
     */
    Replayer(Policies policies, int resolutionSlots, boolean keepRequests) throws IOException {
        this.policies = Objects.requireNonNull(policies);
        this.limiter = PolicyLimiter.builder(policies)
                .store(InMemoryStore.builder().keepIdleKeys(KEEP_IDLE_KEYS).build())
                .clock(clock)
                .recentResolutions(resolutionSlots)
                .build();
        this.spill = keepRequests ? new Spill() : null;
    }

    /**
     * The most slots of the policy engine's table of resolutions for one of {@code parts} deciding a log of
     * {@code logBytes} bytes (-1 when unknown). The service's bound ({@link PolicyLimiter#DEFAULT_RECENT_RESOLUTIONS})
     * misses often when a log's tens of thousands of descriptors are all live, and a replay owns its limiter, so it
     * bounds the table by the log instead: a slot per {@value #LOG_BYTES_PER_SLOT} bytes of it (a line of one
     * descriptor takes more than twice that), split between the parts, at most the descriptors the log's reader keeps
     * whole ({@link Interned#MAX_KEPT}); most for a log of unknown size. The table grows only as far as the
     * descriptors in use ask. The size changes no answer.
     */
    static int resolutionSlots(long logBytes, int parts) {
        long wanted = logBytes < 0 ? Interned.MAX_KEPT : logBytes / LOG_BYTES_PER_SLOT / Math.max(1, parts);
        return (int) Math.max(PolicyLimiter.DEFAULT_RECENT_RESOLUTIONS, Math.min(Interned.MAX_KEPT, wanted));
    }

    Policies policies() {
        return policies;
    }

    /** Counts a bad line, keeping the first few. */
    void bad(BadLine line) {
        badCounts.merge(line.problem(), 1L, Long::sum);
        if (badKept.size() < BAD_LINES_KEPT) {
            badKept.add(line);
        }
    }

    long badLines() {
        long n = 0;
        for (long c : badCounts.values()) {
            n += c;
        }
        return n;
    }

    /** Decides {@code r} as the service would at its time, and counts it. */
    void replay(TimedRequest r) throws IOException {
        long t = r.timeMillis();
        clock.set(t);
        if (t < firstTime) {
            firstTime = t;
        }
        if (t > lastTime) {
            lastTime = t;
        }
        String domain = r.domain();
        List<Descriptor> descriptors = r.descriptors();
        Verdict v = r.uniformHits()
                ? limiter.check(domain, descriptors, r.hits())
                : limiter.check(domain, descriptors, r.hitsArray());
        requests++;
        boolean allowed = v.allowed();
        if (allowed) {
            allowedRequests++;
        } else {
            deniedRequests++;
        }
        if (v.shadowBanned()) {
            shadowBannedRequests++;
        }
        int[] ids = r.descriptorIds();
        if (v.refusedNothing() && countAllowed(r, domain, ids)) {
            return;
        }
        boolean wouldDeny = false;
        List<DescriptorVerdict> verdicts = v.descriptors();
        for (int i = 0; i < verdicts.size(); i++) {
            DescriptorVerdict dv = verdicts.get(i);
            Rule rule = dv.rule().orElse(null);
            if (rule == null) {
                unmatched++;
                continue;
            }
            int id = ids[i];
            Row row = id >= 0 && id < byId.length ? byId[id] : null;
            if (row == null || !row.domain.equals(domain)) {
                row = row(domain, descriptors.get(i), rule, id);
            }
            long hits = r.hits(i);
            row.count(t, hits);
            if (allowed) {
                row.allowed++;
            }
            Outcome o = dv.outcome();
            if (o == Outcome.DENIED || o == Outcome.WOULD_DENY || o == Outcome.SHADOW_BANNED) {
                if (o == Outcome.DENIED) {
                    row.denied++;
                } else if (o == Outcome.WOULD_DENY) {
                    row.wouldDeny++;
                    wouldDeny = true;
                } else {
                    row.shadowBanned++;
                }
                List<dev.sluice.policy.LimitVerdict> limits = dv.limits();
                for (int j = 0; j < limits.size(); j++) {
                    if (limits.get(j).refused()) {
                        row.refusedBy[j]++;
                    }
                }
            }
            if (spill != null) {
                spill.add(row.id, t, hits);
            }
        }
        if (wouldDeny) {
            wouldDenyRequests++;
        }
    }

    /**
     * Counts a request no limit refused ({@link Verdict#refusedNothing()}, so allowed, with no outcome to count) without
     * reading its verdict's answer per descriptor, when every descriptor has its row already (found by its number):
     * each descriptor's rule is its row's, since a descriptor matches one rule in one configuration. False, counting
     * nothing, when a descriptor has no row yet.
     */
    private boolean countAllowed(TimedRequest r, String domain, int[] ids) throws IOException {
        @Nullable Row[] known = byId;
        for (int id : ids) {
            Row row = id >= 0 && id < known.length ? known[id] : null;
            if (row == null || !row.domain.equals(domain)) {
                return false;
            }
        }
        long t = r.timeMillis();
        for (int i = 0; i < ids.length; i++) {
            Row row = Objects.requireNonNull(known[ids[i]], "every row found above");
            long hits = r.hits(i);
            row.count(t, hits);
            row.allowed++;
            if (spill != null) {
                spill.add(row.id, t, hits);
            }
        }
        return true;
    }

    /** The row of {@code d} in {@code domain}, made if new, found by {@code id} from then on when it is one. */
    private Row row(String domain, Descriptor d, Rule rule, int id) {
        Map<Descriptor, Row> domainRows = lastRows;
        if (domainRows == null || !domain.equals(lastDomain)) {
            domainRows = byDomain.computeIfAbsent(domain, k -> new HashMap<>());
            lastDomain = domain;
            lastRows = domainRows;
        }
        Row row = domainRows.get(d);
        if (row == null) {
            row = new Row(rows.size(), domain, rule, d, windows.computeIfAbsent(rule, Row::windows));
            rows.add(row);
            domainRows.put(d, row);
        }
        if (id >= 0) {
            if (id >= byId.length) {
                byId = java.util.Arrays.copyOf(byId, Math.max(id + 1, 2 * byId.length));
            }
            if (byId[id] == null) {
                byId[id] = row;
            }
        }
        return row;
    }

    /** The rows, in the order first seen. */
    List<Row> rows() {
        return rows;
    }

    /**
     * Finds, for every row a limit refused, the smallest limit under which that limit would have refused none of its
     * requests ({@link Row#needed}).
     */
    void findNeededLimits() throws IOException {
        @Nullable Requests[] wanted = new Requests[rows.size()]; // by row id
        boolean any = false;
        for (Row row : rows) {
            for (long refused : row.refusedBy) {
                if (refused > 0) {
                    wanted[row.id] = new Requests();
                    any = true;
                    break;
                }
            }
        }
        if (!any) {
            return;
        }
        spilled().read((row, time, hits) -> {
            Requests r = wanted[row];
            if (r != null) {
                r.add(time, hits);
            }
        });
        for (Row row : rows) {
            Requests r = wanted[row.id];
            if (r == null) {
                continue;
            }
            List<Limit> limits = row.rule.limits();
            for (int j = 0; j < limits.size(); j++) {
                if (row.refusedBy[j] == 0) {
                    continue;
                }
                Limit l = limits.get(j);
                Algorithm a = l.algorithm();
                Duration w = l.window();
                if (a == null || w == null) {
                    continue; // unlimited: never refuses
                }
                row.needed[j] = NeededLimit.of(a, w, r.times, r.hits, r.n);
            }
        }
    }

    /** Reads every spilled request back. */
    void readSpill(Spill.Visitor visitor) throws IOException {
        spilled().read(visitor);
    }

    private Spill spilled() {
        Spill s = spill;
        if (s == null) {
            throw new IllegalStateException("this replay kept no requests to read back");
        }
        return s;
    }

    void close() throws IOException {
        limiter.close();
        if (spill != null) {
            spill.close();
        }
    }

    /** One key's requests, read back from the spill. */
    static final class Requests {
        long[] times = new long[16];
        long[] hits = new long[16];
        int n;

        void add(long time, long cost) {
            if (n == times.length) {
                times = java.util.Arrays.copyOf(times, 2 * n);
                hits = java.util.Arrays.copyOf(hits, 2 * n);
            }
            times[n] = time;
            hits[n++] = cost;
        }
    }
}
