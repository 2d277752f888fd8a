package dev.sluice.server;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.DoubleSupplier;
import org.jspecify.annotations.Nullable;

/**
 * envoyproxy/ratelimit's stats as its Prometheus sink exports them ({@code serve --prometheus-addr}): each StatsD-style
 * name {@link EnvoyStats} counts goes through a {@link StatsdMapper} to a Prometheus name and labels, as its sink feeds
 * them through statsd_exporter, and {@link #text()} writes them in Prometheus' text format. Thread-safe.
 *
 * <p>As statsd_exporter does: counters keep their mapped name (no {@code _total} added); an observed value (a timer,
 * in milliseconds as envoyproxy/ratelimit sends it, times the mapping's {@code scale}) goes to a histogram with the
 * mapping's buckets or to a summary (quantiles 0.5, 0.9 and 0.99 over the last ten minutes); several StatsD names that
 * map to one name and labels add up in one series; a name already taken by another type drops the event; a series
 * appears once it has counted something (envoyproxy/ratelimit flushes no counter that has not moved). Labels are sorted
 * by name, as the Prometheus client writes them.
 */
final class MappedStats {
    /** Where one StatsD counter name adds. */
    interface Counter {
        void add(double amount);
    }

    /** Where one StatsD timer name records, in milliseconds. */
    interface Timer {
        void record(double millis);
    }

    private static final Counter DROPPED_COUNTER = amount -> {};
    private static final Timer DROPPED_TIMER = millis -> {};

    private enum Kind {
        COUNTER("counter"),
        HISTOGRAM("histogram"),
        SUMMARY("summary");

        final String text;

        Kind(String text) {
            this.text = text;
        }
    }

    private final StatsdMapper mapper;
    private final Map<String, Family> families = new ConcurrentHashMap<>();
    /** Summaries compute their quantiles here; none of its meters is exported as such. */
    private final SimpleMeterRegistry summaries = new SimpleMeterRegistry();

    private final AtomicLong summaryIds = new AtomicLong();

    MappedStats(StatsdMapper mapper) {
        this.mapper = mapper;
    }

    StatsdMapper mapper() {
        return mapper;
    }

    /** Where the counter {@code statsdName} adds; a no-op if it is dropped. */
    Counter counter(String statsdName) {
        StatsdMapper.Result r = mapper.map(statsdName, StatsdMapper.Type.COUNTER);
        Series s = series(r, Kind.COUNTER);
        if (!(s instanceof CounterSeries c)) {
            return DROPPED_COUNTER;
        }
        double scale = r.scale();
        return Double.isNaN(scale) ? c.value::add : amount -> c.value.add(amount * scale);
    }

    /** Adds {@code total}, read at each export, to the counter {@code statsdName}: a count kept elsewhere. */
    void counter(String statsdName, DoubleSupplier total) {
        StatsdMapper.Result r = mapper.map(statsdName, StatsdMapper.Type.COUNTER);
        if (series(r, Kind.COUNTER) instanceof CounterSeries c) {
            double scale = r.scale();
            c.functions.add(Double.isNaN(scale) ? total : () -> total.getAsDouble() * scale);
        }
    }

    /** Where the timer {@code statsdName} records; a no-op if it is dropped. */
    Timer timer(String statsdName) {
        StatsdMapper.Result r = mapper.map(statsdName, StatsdMapper.Type.OBSERVER);
        Kind kind = r.observer() == StatsdMapper.Observer.HISTOGRAM ? Kind.HISTOGRAM : Kind.SUMMARY;
        Series s = series(r, kind);
        if (s == null) {
            return DROPPED_TIMER;
        }
        double scale = Double.isNaN(r.scale()) ? 1 : r.scale();
        if (s instanceof HistogramSeries h) {
            return millis -> h.observe(millis * scale);
        }
        SummarySeries summary = (SummarySeries) s;
        return millis -> summary.summary.record(millis * scale);
    }

    /** The series {@code r} names, made if new; null if dropped or its name is taken by another kind. */
    private @Nullable Series series(StatsdMapper.Result r, Kind kind) {
        if (r.drop() || r.name().isEmpty()) {
            return null;
        }
        Family f = families.computeIfAbsent(r.name(), n -> new Family(kind, r.help()));
        if (f.kind != kind) {
            return null;
        }
        return f.series.computeIfAbsent(r.labels(), l -> switch (kind) {
            case COUNTER -> new CounterSeries();
            case HISTOGRAM -> new HistogramSeries(r.buckets());
            case SUMMARY -> new SummarySeries(DistributionSummary.builder("summary" + summaryIds.incrementAndGet())
                    .publishPercentiles(0.5, 0.9, 0.99)
                    .distributionStatisticExpiry(Duration.ofMinutes(10))
                    .distributionStatisticBufferLength(5)
                    .register(summaries));
        });
    }

    /** Every series that has counted something, in Prometheus' text format (version 0.0.4), families by name. */
    String text() {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, Family> e : new TreeMap<>(families).entrySet()) {
            String name = e.getKey();
            Family f = e.getValue();
            List<Map.Entry<SortedMap<String, String>, Series>> rows = new ArrayList<>(f.series.entrySet());
            rows.removeIf(row -> !row.getValue().counted());
            if (rows.isEmpty()) {
                continue;
            }
            rows.sort(Map.Entry.comparingByKey(MappedStats::compare));
            out.append("# HELP ").append(name).append(' ').append(help(f.help)).append('\n');
            out.append("# TYPE ").append(name).append(' ').append(f.kind.text).append('\n');
            for (Map.Entry<SortedMap<String, String>, Series> row : rows) {
                row.getValue().write(name, row.getKey(), out);
            }
        }
        return out.toString();
    }

    /** Labels in order: pair by pair, name then value; a series whose labels are the start of another's first. */
    static int compare(SortedMap<String, String> a, SortedMap<String, String> b) {
        var i = a.entrySet().iterator();
        var j = b.entrySet().iterator();
        while (i.hasNext() && j.hasNext()) {
            Map.Entry<String, String> x = i.next();
            Map.Entry<String, String> y = j.next();
            int c = x.getKey().compareTo(y.getKey());
            if (c == 0) {
                c = x.getValue().compareTo(y.getValue());
            }
            if (c != 0) {
                return c;
            }
        }
        return Boolean.compare(i.hasNext(), j.hasNext());
    }

    private static String help(String text) {
        return text.replace("\\", "\\\\").replace("\n", "\\n");
    }

    /** {@code {a="x",b="y"}} with {@code extra=value} last if given; empty for no labels. */
    static String labels(SortedMap<String, String> labels, @Nullable String extra, @Nullable String value) {
        if (labels.isEmpty() && extra == null) {
            return "";
        }
        StringBuilder b = new StringBuilder("{");
        labels.forEach((k, v) -> b.append(k).append("=\"").append(escape(v)).append("\","));
        if (extra != null) {
            b.append(extra).append("=\"").append(value).append("\",");
        }
        b.setLength(b.length() - 1);
        return b.append('}').toString();
    }

    private static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    /** A number as the text format writes it: whole numbers without a fraction. */
    static String number(double v) {
        if (Double.isInfinite(v)) {
            return v > 0 ? "+Inf" : "-Inf";
        }
        return v == Math.rint(v) && Math.abs(v) < 1e15 ? Long.toString((long) v) : Double.toString(v);
    }

    private record Family(Kind kind, String help, Map<SortedMap<String, String>, Series> series) {
        Family(Kind kind, String help) {
            this(kind, help, new ConcurrentHashMap<>());
        }
    }

    private interface Series {
        boolean counted();

        void write(String name, SortedMap<String, String> labels, StringBuilder out);
    }

    private static final class CounterSeries implements Series {
        final DoubleAdder value = new DoubleAdder();
        final List<DoubleSupplier> functions = new CopyOnWriteArrayList<>();

        double total() {
            double t = value.sum();
            for (DoubleSupplier f : functions) {
                t += f.getAsDouble();
            }
            return t;
        }

        @Override
        public boolean counted() {
            return total() != 0;
        }

        @Override
        public void write(String name, SortedMap<String, String> labels, StringBuilder out) {
            out.append(name)
                    .append(labels(labels, null, null))
                    .append(' ')
                    .append(number(total()))
                    .append('\n');
        }
    }

    private static final class HistogramSeries implements Series {
        private final double[] bounds;
        /** Observations per bucket, not cumulative; the last is above every bound. */
        private final LongAdder[] buckets;

        private final DoubleAdder sum = new DoubleAdder();
        private final LongAdder count = new LongAdder();

        HistogramSeries(List<Double> bounds) {
            this.bounds = bounds.stream().mapToDouble(Double::doubleValue).toArray();
            this.buckets = new LongAdder[this.bounds.length + 1];
            for (int i = 0; i < buckets.length; i++) {
                buckets[i] = new LongAdder();
            }
        }

        void observe(double v) {
            int i = 0;
            while (i < bounds.length && v > bounds[i]) {
                i++;
            }
            buckets[i].increment();
            sum.add(v);
            count.increment();
        }

        @Override
        public boolean counted() {
            return count.sum() > 0;
        }

        @Override
        public void write(String name, SortedMap<String, String> labels, StringBuilder out) {
            long cumulative = 0;
            long[] counts = new long[buckets.length];
            for (int i = 0; i < counts.length; i++) {
                counts[i] = buckets[i].sum();
            }
            for (int i = 0; i < counts.length; i++) {
                cumulative += counts[i];
                String le = i < bounds.length ? number(bounds[i]) : "+Inf";
                out.append(name)
                        .append("_bucket")
                        .append(labels(labels, "le", le))
                        .append(' ')
                        .append(cumulative)
                        .append('\n');
            }
            sumAndCount(name, labels, number(sum.sum()), cumulative, out);
        }
    }

    private record SummarySeries(DistributionSummary summary) implements Series {
        @Override
        public boolean counted() {
            return summary.count() > 0;
        }

        @Override
        public void write(String name, SortedMap<String, String> labels, StringBuilder out) {
            HistogramSnapshot s = summary.takeSnapshot();
            for (ValueAtPercentile p : s.percentileValues()) {
                out.append(name)
                        .append(labels(labels, "quantile", number(p.percentile())))
                        .append(' ')
                        .append(number(p.value()))
                        .append('\n');
            }
            sumAndCount(name, labels, number(s.total()), s.count(), out);
        }
    }

    /** The {@code _sum} and {@code _count} lines a histogram and a summary both end with. */
    private static void sumAndCount(
            String name, SortedMap<String, String> labels, String sum, long count, StringBuilder out) {
        String plain = labels(labels, null, null);
        out.append(name).append("_sum").append(plain).append(' ').append(sum).append('\n');
        out.append(name)
                .append("_count")
                .append(plain)
                .append(' ')
                .append(count)
                .append('\n');
    }
}
