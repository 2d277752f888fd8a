package dev.sluice.server.simulate;

import dev.sluice.policy.Descriptor;
import dev.sluice.server.replay.BadLine;
import dev.sluice.server.replay.LogReader;
import dev.sluice.server.replay.TimedRequest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A request log as {@code simulate}'s traffic, read by {@link LogReader} as {@code replay} reads it. Each descriptor of
 * a request is one request on its own key ({@code domain|k=v,k=v}), at the line's time after the log's first line.
 * The log is held in memory, 16 bytes a descriptor.
 *
 * <p>Spread: at random over the live instances, or by a descriptor key ({@code by=client_id}): every request with that
 * key goes to the instance its value hashes to, as a load balancer with sticky routing would send it; a request
 * without the key goes to one at random.
 */
final class LogTraffic {
    private final long[] nanos;
    private final int[] keys;
    private final int[] hashes;
    private final boolean[] hashed;
    private final String[] keyNames;
    private final int size;
    private final long badLines;

    private LogTraffic(
            long[] nanos, int[] keys, int[] hashes, boolean[] hashed, String[] keyNames, int size, long badLines) {
        this.nanos = nanos;
        this.keys = keys;
        this.hashes = hashes;
        this.hashed = hashed;
        this.keyNames = keyNames;
        this.size = size;
        this.badLines = badLines;
    }

    /**
     * Reads {@code log}.
     *
     * @param by    the descriptor key whose value chooses the instance, or null for a random spread
     * @param onBad told of every line that is not a request
     */
    static LogTraffic read(Path log, @Nullable String by, Consumer<BadLine> onBad) throws IOException {
        long[] nanos = new long[1024];
        int[] keys = new int[1024];
        int[] hashes = new int[1024];
        boolean[] hashed = new boolean[1024];
        Map<String, Integer> index = new HashMap<>();
        List<String> names = new ArrayList<>();
        int n = 0;
        long first = Long.MIN_VALUE;
        try (LogReader reader = LogReader.builder(log).onBadLine(onBad).open()) {
            for (TimedRequest r; (r = reader.next()) != null; ) {
                if (first == Long.MIN_VALUE) {
                    first = r.timeMillis();
                }
                String value = by == null ? null : valueOf(r.descriptors(), by);
                for (Descriptor d : r.descriptors()) {
                    if (n == nanos.length) {
                        nanos = Arrays.copyOf(nanos, 2 * n);
                        keys = Arrays.copyOf(keys, 2 * n);
                        hashes = Arrays.copyOf(hashes, 2 * n);
                        hashed = Arrays.copyOf(hashed, 2 * n);
                    }
                    String name = r.domain() + "|" + entries(d);
                    Integer k = index.get(name);
                    if (k == null) {
                        k = names.size();
                        index.put(name, k);
                        names.add(name);
                    }
                    nanos[n] = (r.timeMillis() - first) * 1_000_000L;
                    keys[n] = k;
                    hashed[n] = value != null;
                    hashes[n] = value == null ? 0 : value.hashCode();
                    n++;
                }
            }
            return new LogTraffic(nanos, keys, hashes, hashed, names.toArray(new String[0]), n, reader.badLines());
        }
    }

    private static @Nullable String valueOf(List<Descriptor> descriptors, String key) {
        for (Descriptor d : descriptors) {
            for (Descriptor.Entry e : d.entries()) {
                if (e.key().equals(key)) {
                    return e.value();
                }
            }
        }
        return null;
    }

    /** {@code k=v,k=v}, as {@code replay} names a key. */
    private static String entries(Descriptor d) {
        StringBuilder b = new StringBuilder();
        for (Descriptor.Entry e : d.entries()) {
            b.append(b.length() == 0 ? "" : ",").append(e.key()).append('=').append(e.value());
        }
        return b.toString();
    }

    /** Requests (one per descriptor). */
    int size() {
        return size;
    }

    /** Lines that were not requests. */
    long badLines() {
        return badLines;
    }

    /** Distinct keys. */
    int keys() {
        return keyNames.length;
    }

    String keyName(int k) {
        return keyNames[k];
    }

    /** When request {@code i} comes, in nanoseconds after the first. */
    long nanos(int i) {
        return nanos[i];
    }

    int key(int i) {
        return keys[i];
    }

    /** Whether request {@code i} has the spread's key, and so goes to {@link #instance} rather than one at random. */
    boolean routed(int i) {
        return hashed[i];
    }

    /** The instance, of {@code live}, that request {@code i}'s value of the spread's key goes to. */
    int instance(int i, int live) {
        return Math.floorMod(hashes[i], live);
    }

    /** From the first request to just after the last. */
    long spanNanos() {
        return size == 0 ? 0 : nanos[size - 1] + 1;
    }
}
