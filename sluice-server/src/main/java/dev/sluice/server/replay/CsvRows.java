package dev.sluice.server.replay;

import dev.sluice.policy.Rule;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code replay --csv}: a header and one row per rule and key, {@code domain,rule,key,requests,allowed,denied}, sorted
 * by domain, rule (in the configuration's order) and key. {@code rule} is the rule's path as {@code /rlconfig} names it
 * after its domain ({@code client_id.username}); {@code key} the descriptor's entries as {@code k=v,k=v} in entry
 * order. A field holding a comma, a quote or a line break is quoted as RFC 4180 quotes it, so a key of two entries is
 * written {@code "client_id=abc,username=bob"}.
 */
final class CsvRows {
    static final String HEADER = "domain,rule,key,requests,allowed,denied";

    private CsvRows() {}

    static void print(Replayed replayer, PrintStream out) {
        StringBuilder b = new StringBuilder(1 << 16);
        b.append(HEADER).append('\n');
        for (Row row : sorted(replayer)) {
            field(b, row.domain).append(',');
            field(b, row.rule.path()).append(',');
            field(b, row.key()).append(',');
            b.append(row.requests)
                    .append(',')
                    .append(row.allowed)
                    .append(',')
                    .append(row.denied)
                    .append('\n');
            if (b.length() > 1 << 15) {
                out.append(b);
                b.setLength(0);
            }
        }
        out.append(b);
    }

    /** The rows by domain, then rule in the configuration's order, then key. */
    static List<Row> sorted(Replayed replayer) {
        Map<Rule, Integer> order = new HashMap<>();
        for (String d : replayer.policies().domains()) {
            for (Rule r : replayer.policies().rules(d)) {
                order.put(r, order.size());
            }
        }
        List<Keyed> keyed = new ArrayList<>(replayer.rows().size());
        for (Row r : replayer.rows()) {
            keyed.add(new Keyed(r, order.getOrDefault(r.rule, Integer.MAX_VALUE), r.key()));
        }
        keyed.sort(Comparator.comparing((Keyed k) -> k.row().domain)
                .thenComparingInt(Keyed::rank)
                .thenComparing(Keyed::key));
        List<Row> rows = new ArrayList<>(keyed.size());
        for (Keyed k : keyed) {
            rows.add(k.row());
        }
        return rows;
    }

    /** A row with what it is sorted by, each found once. */
    private record Keyed(Row row, int rank, String key) {}

    static StringBuilder field(StringBuilder b, String s) {
        boolean quote = false;
        for (int i = 0; i < s.length() && !quote; i++) {
            char c = s.charAt(i);
            quote = c == ',' || c == '"' || c == '\n' || c == '\r';
        }
        if (!quote) {
            return b.append(s);
        }
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"') {
                b.append('"');
            }
            b.append(c);
        }
        return b.append('"');
    }
}
