package dev.sluice.server.replay;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Every counted request of a replay, in time order, as {@code (row, time, hits)} in a temporary file: a few bytes
 * each (varints, the time as the step from the one before), so that the memory of a replay does not grow with the
 * log. Read back, whole or for some rows, to find the limit each key needed, to sweep a rule's limit and to chart the
 * busiest keys. The file is deleted on {@link #close()}.
 */
final class Spill implements Closeable {
    /** What reading gives, record by record. */
    interface Visitor {
        void request(int row, long timeMillis, long hits);
    }

    private final Path file;
    private final OutputStream out;
    private final byte[] buf = new byte[1 << 16];
    private int n;
    private long last;
    private long records;

    Spill() throws IOException {
        this.file = Files.createTempFile("sluice-replay-", ".spill");
        this.out = Files.newOutputStream(file, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
    }

    /** Appends a request of {@code row}; times never go back. */
    void add(int row, long timeMillis, long hits) throws IOException {
        if (n > buf.length - 30) {
            out.write(buf, 0, n);
            n = 0;
        }
        varint(row);
        varint(timeMillis - last);
        varint(hits);
        last = timeMillis;
        records++;
    }

    private void varint(long v) {
        while ((v & ~0x7FL) != 0) {
            buf[n++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        buf[n++] = (byte) v;
    }

    /** The requests added. */
    long records() {
        return records;
    }

    /** Bytes written so far. */
    long bytes() throws IOException {
        out.flush();
        return Files.size(file) + n;
    }

    /** Reads every request back, in the order added. */
    void read(Visitor visitor) throws IOException {
        if (n > 0) {
            out.write(buf, 0, n);
            n = 0;
        }
        out.flush();
        byte[] b = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            int len = 0;
            int p = 0;
            long time = 0;
            long[] v = new long[3];
            while (true) {
                if (len - p < 30) { // less than a whole record may be left: refill
                    System.arraycopy(b, p, b, 0, len - p);
                    len -= p;
                    p = 0;
                    int r;
                    while (len < b.length && (r = in.read(b, len, b.length - len)) > 0) {
                        len += r;
                    }
                    if (len == 0) {
                        return;
                    }
                }
                for (int k = 0; k < 3; k++) {
                    long x = 0;
                    int shift = 0;
                    byte c;
                    do {
                        c = b[p++];
                        x |= (long) (c & 0x7F) << shift;
                        shift += 7;
                    } while (c < 0);
                    v[k] = x;
                }
                time += v[1];
                visitor.request((int) v[0], time, v[2]);
            }
        }
    }

    @Override
    public void close() throws IOException {
        try {
            out.close();
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
