package dev.sluice.server.replay;

import dev.sluice.policy.Descriptor;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The descriptors and domains a log reader has seen, found by their bytes: a line whose descriptor was seen before gets
 * the very same {@link Descriptor} (and list of it) without making a string, so that what is keyed by descriptors
 * downstream (the replay's rows, the policy engine's match of a descriptor's values) compares them by identity and
 * finds their strings' hashes made. An open-addressing table that keeps every distinct descriptor up to
 * {@value #MAX_KEPT} of them (a replay keeps a row for each anyway); past that, a descriptor not kept is made anew on
 * every line, as correct and slower, so memory is bounded whatever the log. A kept descriptor has a number, dense from
 * 0, by which a replay finds its row without hashing it.
 *
 * <p>A descriptor's bytes ({@link #sig}) are its entries as {@code key 0xFE value 0xFF …}, unescaped: 0xFE and 0xFF
 * are in no UTF-8 text, so two different descriptors never share them.
 */
final class Interned {
    /** The most descriptors kept. */
    static final int MAX_KEPT = 1 << 20;

    /** A descriptor seen, with its bytes, its number and the list of it alone. */
    static final class Slot {
        private final byte[] sig;
        private final int hash;
        final Descriptor descriptor;
        final List<Descriptor> alone;
        /** Its number among the descriptors kept, from 0 in the order first seen; -1 when not kept. */
        final int id;
        /** {@link #id} alone, as {@link TimedRequest#descriptorIds()} gives it: never written. */
        final int[] aloneIds;

        Slot(byte[] sig, int hash, Descriptor descriptor, int id) {
            this.sig = sig;
            this.hash = hash;
            this.descriptor = descriptor;
            this.alone = List.of(descriptor);
            this.id = id;
            this.aloneIds = new int[] {id};
        }
    }

    /** Linear probing, at most half full; grows by doubling until it holds {@link #MAX_KEPT}. */
    private @Nullable Slot[] slots = new Slot[1 << 12];

    private int kept;

    /** The bytes of the descriptor being read: {@link #sigLength} of them. */
    byte[] sig = new byte[256];

    int sigLength;
    /** Where each entry's key and value start and end in {@link #sig}: 4 ints per entry, {@link #entries} entries. */
    int[] bounds = new int[16];

    int entries;

    private byte @Nullable [] lastDomain;
    private String lastDomainName = "";

    /** Starts a descriptor. */
    void begin() {
        sigLength = 0;
        entries = 0;
    }

    void put(byte b) {
        if (sigLength == sig.length) {
            sig = Arrays.copyOf(sig, sig.length * 2);
        }
        sig[sigLength++] = b;
    }

    void put(byte[] b, int from, int to) {
        int n = to - from;
        if (sigLength + n > sig.length) {
            sig = Arrays.copyOf(sig, Math.max(sig.length * 2, sigLength + n));
        }
        System.arraycopy(b, from, sig, sigLength, n);
        sigLength += n;
    }

    /**
     * Ends an entry whose key is {@code sig[ks, ke)} and value {@code sig[vs, ve)}, put as {@code key 0xFE value 0xFF}
     * (or, when the line gave the value first, {@code value 0xFF key 0xFE}, which is turned around here).
     */
    void entry(int ks, int ke, int vs, int ve) {
        if (vs < ks) {
            byte[] value = Arrays.copyOfRange(sig, vs, ve);
            int keyLength = ke - ks;
            System.arraycopy(sig, ks, sig, vs, keyLength);
            ks = vs;
            ke = vs + keyLength;
            sig[ke] = (byte) 0xFE;
            vs = ke + 1;
            ve = vs + value.length;
            System.arraycopy(value, 0, sig, vs, value.length);
            sig[ve] = (byte) 0xFF;
        }
        int i = 4 * entries;
        if (i + 4 > bounds.length) {
            bounds = Arrays.copyOf(bounds, bounds.length * 2);
        }
        bounds[i] = ks;
        bounds[i + 1] = ke;
        bounds[i + 2] = vs;
        bounds[i + 3] = ve;
        entries++;
    }

    /** The descriptor of the entries put since {@link #begin()}, and the list of it alone: seen before, or new and kept. */
    Slot lookup() throws LogReader.LineException {
        byte[] s = sig;
        int n = sigLength;
        int h = 1;
        for (int i = 0; i < n; i++) {
            h = 31 * h + s[i];
        }
        h ^= h >>> 16;
        @Nullable Slot[] table = slots;
        int mask = table.length - 1;
        int at = h & mask;
        for (Slot slot; (slot = table[at]) != null; at = (at + 1) & mask) {
            if (slot.hash == h && Arrays.equals(slot.sig, 0, slot.sig.length, s, 0, n)) {
                return slot;
            }
        }
        List<Descriptor.Entry> list = new ArrayList<>(entries);
        for (int e = 0; e < entries; e++) {
            String key = utf8(s, bounds[4 * e], bounds[4 * e + 1], "a descriptor key");
            String value = utf8(s, bounds[4 * e + 2], bounds[4 * e + 3], "a descriptor value");
            list.add(new Descriptor.Entry(key, value));
        }
        boolean keep = kept < MAX_KEPT;
        Slot slot = new Slot(Arrays.copyOf(s, n), h, Descriptor.of(list), keep ? kept : -1);
        if (keep) {
            table[at] = slot;
            if (++kept * 2 > table.length) {
                grow();
            }
        }
        return slot;
    }

    private void grow() {
        @Nullable Slot[] old = slots;
        @Nullable Slot[] table = new Slot[old.length * 2];
        int mask = table.length - 1;
        for (Slot slot : old) {
            if (slot != null) {
                int at = slot.hash & mask;
                while (table[at] != null) {
                    at = (at + 1) & mask;
                }
                table[at] = slot;
            }
        }
        slots = table;
    }

    /**
     * {@code b[from, to)} as UTF-8, refused when it is not valid UTF-8 ({@code what} names it in the message). Text of
     * ASCII bytes alone, as most logs' keys and values are, becomes its string without a decoder, so that the decoder
     * (a large piece of code) is never compiled into a reader that meets none.
     */
    static String utf8(byte[] b, int from, int to, String what) throws LogReader.LineException {
        for (int i = from; i < to; i++) {
            if (b[i] < 0) {
                return decode(b, from, to, what);
            }
        }
        return new String(b, from, to - from, StandardCharsets.US_ASCII);
    }

    private static String decode(byte[] b, int from, int to, String what) throws LogReader.LineException {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(b, from, to - from))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new LogReader.LineException(BadLine.Problem.MALFORMED, what + " is not valid UTF-8");
        }
    }

    /** The domain of {@code b[from, to)}, unescaped bytes: the last one's string when they are the same. */
    String domain(byte[] b, int from, int to) throws LogReader.LineException {
        byte[] last = lastDomain;
        if (last != null && Arrays.equals(last, 0, last.length, b, from, to)) {
            return lastDomainName;
        }
        String name = utf8(b, from, to, "the domain");
        lastDomain = Arrays.copyOfRange(b, from, to);
        lastDomainName = name;
        return name;
    }
}
