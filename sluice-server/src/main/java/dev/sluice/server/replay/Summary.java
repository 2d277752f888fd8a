package dev.sluice.server.replay;

import dev.sluice.policy.Limit;
import dev.sluice.policy.Mode;
import dev.sluice.policy.Rule;
import dev.sluice.spi.Durations;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** The readable output of {@code replay}: totals, bad lines, per rule the top keys by refusals, and the sweep. */
final class Summary {
    private Summary() {}

    static void print(Replayed r, Replay.Settings s, @Nullable Sweep sweep, long nanos, PrintStream out) {
        StringBuilder b = new StringBuilder();
        double seconds = nanos / 1e9;
        b.append(String.format(
                Locale.ROOT,
                "replay of %s through %s: %,d lines, %,d requests, in %.1f s (%,.0f lines/s)%n",
                s.log(),
                s.config(),
                r.lines,
                r.requests,
                seconds,
                r.lines / Math.max(seconds, 1e-9)));
        if (r.requests > 0) {
            b.append(String.format(
                    Locale.ROOT,
                    "log time %s to %s (%s)%n",
                    Instant.ofEpochMilli(r.firstTime),
                    Instant.ofEpochMilli(r.lastTime),
                    Durations.approximately(Duration.ofMillis(r.lastTime - r.firstTime))));
        }
        b.append(String.format(
                Locale.ROOT,
                "requests: %,d allowed, %,d denied (%s), %,d would have been denied by a dry run, %,d shadow-banned%n",
                r.allowedRequests,
                r.deniedRequests,
                percent(r.deniedRequests, r.requests),
                r.wouldDenyRequests,
                r.shadowBannedRequests));
        if (r.unmatched > 0) {
            b.append(String.format(Locale.ROOT, "descriptors no rule matched (allowed, no limit): %,d%n", r.unmatched));
        }
        b.append(r.decidedBy).append('\n');
        long bad = r.badLines();
        b.append(bad == 0 ? "bad lines: none\n" : "bad lines: " + badCounts(r) + " (listed on standard error)\n");

        Map<Rule, List<Row>> byRule = new LinkedHashMap<>();
        for (Row row : CsvRows.sorted(r)) {
            byRule.computeIfAbsent(row.rule, k -> new ArrayList<>()).add(row);
        }
        List<String> idle = new ArrayList<>();
        for (String d : r.policies().domains()) {
            for (Rule rule : r.policies().rules(d)) {
                if (!byRule.containsKey(rule)) {
                    idle.add(d + "." + rule.path());
                }
            }
        }
        for (Map.Entry<Rule, List<Row>> e : byRule.entrySet()) {
            rule(b, e.getKey(), e.getValue(), s.top());
        }
        if (!idle.isEmpty()) {
            b.append("\nrules no request reached: ")
                    .append(String.join(", ", idle))
                    .append('\n');
        }
        if (sweep != null) {
            sweep(b, sweep);
        }
        out.print(b);
    }

    private static void rule(StringBuilder b, Rule rule, List<Row> rows, int top) {
        long requests = 0;
        long allowed = 0;
        long refused = 0;
        long keysRefused = 0;
        for (Row row : rows) {
            requests += row.requests;
            allowed += row.allowed;
            refused += row.refused();
            if (row.refused() > 0) {
                keysRefused++;
            }
        }
        String refusal = refusal(rule.mode());
        b.append('\n')
                .append(rows.get(0).domain)
                .append(' ')
                .append(rule.path())
                .append(": ")
                .append(limits(rule))
                .append(rule.mode() == Mode.ENFORCE ? "" : ", " + rule.mode().configName())
                .append('\n');
        b.append(String.format(
                Locale.ROOT,
                "  %,d keys, %,d requests: %,d allowed, %,d %s (%s); %,d keys %s%n",
                rows.size(),
                requests,
                allowed,
                refused,
                refusal,
                percent(refused, requests),
                keysRefused,
                refusal.equals("denied") ? "denied" : refusal));
        List<Row> shown = new ArrayList<>(rows);
        shown.sort(Comparator.comparingLong(Row::refused)
                .reversed()
                .thenComparing(Comparator.comparingLong((Row x) -> x.requests).reversed()));
        shown = shown.subList(0, Math.min(top, shown.size()));
        int width = 3;
        for (Row row : shown) {
            width = Math.max(width, Math.min(60, row.key().length()));
        }
        b.append(String.format(
                Locale.ROOT,
                "  %-" + width + "s %12s %12s %12s  %-24s %s%n",
                "key",
                "requests",
                "allowed",
                refusal,
                "peak per window",
                "needed to pass all"));
        for (Row row : shown) {
            String key = row.key();
            if (key.length() > 60) {
                key = key.substring(0, 59) + "…";
            }
            b.append(String.format(
                    Locale.ROOT,
                    "  %-" + width + "s %,12d %,12d %,12d  %-24s %s%n",
                    key,
                    row.requests,
                    row.allowed,
                    row.refused(),
                    peaks(row),
                    needed(row)));
        }
        if (rows.size() > shown.size()) {
            b.append(
                    String.format(Locale.ROOT, "  … and %,d more keys (--top N, --csv)%n", rows.size() - shown.size()));
        }
    }

    private static void sweep(StringBuilder b, Sweep s) {
        b.append(String.format(
                Locale.ROOT,
                "%nsweep of %s %s (now %s), each key's requests alone under the limit: %,d keys, %,d requests;"
                        + " %.2f s, %.3f s per candidate%n",
                s.domain,
                s.rule.path(),
                s.limit,
                s.keys,
                s.requests,
                s.nanos / 1e9,
                s.nanos / 1e9 / s.candidates.length));
        b.append(String.format(Locale.ROOT, "  %14s %14s %18s%n", "limit", "keys refused", "requests refused"));
        for (int c = 0; c < s.candidates.length; c++) {
            b.append(String.format(
                    Locale.ROOT,
                    "  %14s %,14d %,18d%n",
                    per(s.candidates[c], s.limit),
                    s.keysRefused[c],
                    s.requestsRefused[c]));
        }
    }

    /** Bad lines on the error stream: the counts, and the first few in full. */
    static void badLines(Replayed r, PrintStream err) {
        err.println("replay: " + badCounts(r) + "; " + (r.badKept.size() < r.badLines() ? "the first:" : "each:"));
        for (BadLine line : r.badKept) {
            err.println("  " + line);
        }
    }

    private static String badCounts(Replayed r) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "%,d bad line(s) not replayed (", r.badLines()));
        String sep = "";
        for (Map.Entry<BadLine.Problem, Long> e : r.badCounts.entrySet()) {
            b.append(sep).append(e.getKey().words()).append(' ').append(e.getValue());
            sep = ", ";
        }
        return b.append(')').toString();
    }

    static String refusal(Mode mode) {
        return switch (mode) {
            case ENFORCE -> "denied";
            case DRY_RUN -> "would deny";
            case SHADOW_BAN -> "shadow-banned";
            case QUOTA -> "over quota";
        };
    }

    static String limits(Rule rule) {
        List<String> l = new ArrayList<>();
        for (Limit limit : rule.limits()) {
            l.add(limit.toString());
        }
        return String.join(" and ", l);
    }

    /** Each limit's peak hits in one of its windows, and the share of the limit: {@code 320/second (640%)}. */
    static String peaks(Row row) {
        List<String> out = new ArrayList<>();
        List<Limit> limits = row.rule.limits();
        for (int j = 0; j < limits.size(); j++) {
            Limit l = limits.get(j);
            if (l.unlimited()) {
                continue;
            }
            out.add(per(row.peak(j), l) + " (" + percent(row.peak(j), l.requestsPerUnit()) + ")");
        }
        return out.isEmpty() ? "-" : String.join(", ", out);
    }

    /** The limit each refusing limit needed to pass all of the row's requests; {@code -} when none refused. */
    static String needed(Row row) {
        List<String> out = new ArrayList<>();
        List<Limit> limits = row.rule.limits();
        for (int j = 0; j < limits.size(); j++) {
            if (row.needed[j] > 0) {
                out.add(per(row.needed[j], limits.get(j)));
            }
        }
        return out.isEmpty() ? "-" : String.join(", ", out);
    }

    /** {@code n} per the limit's unit or window: {@code 320/second}, {@code 20/10s}. */
    static String per(long n, Limit l) {
        String unit = l.unit();
        return n + "/"
                + (unit != null ? unit : Durations.format(Objects.requireNonNull(l.window(), "a limited limit's")));
    }

    static String percent(long part, long whole) {
        if (whole == 0) {
            return "0%";
        }
        double p = 100.0 * part / whole;
        return p >= 10 || p == 0 ? String.format(Locale.ROOT, "%.0f%%", p) : String.format(Locale.ROOT, "%.2f%%", p);
    }
}
