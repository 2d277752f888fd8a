package dev.sluice.server;

import io.grpc.netty.shaded.io.netty.buffer.Unpooled;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.DefaultHttp2HeadersDecoder;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Exception;
import io.grpc.netty.shaded.io.netty.handler.codec.http2.Http2Headers;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A gRPC client at the level of HTTP/2 frames, that does what a hostile one does and a real one never would: opens
 * streams past the server's {@code SETTINGS_MAX_CONCURRENT_STREAMS} without waiting for answers, resets streams as fast
 * as it opens them, and holds streams open with their message unsent. Frames are written by hand (headers as HPACK
 * literals, no Huffman); the server's headers are read with Netty's HPACK decoder (from grpc-netty-shaded). It records
 * how each stream ended: its {@code grpc-status}, or the error code of the server's {@code RST_STREAM}. It speaks
 * plain HTTP over h2c too ({@link #request}), recording each stream's answer.
 */
final class RawHttp2 implements AutoCloseable {
    static final String SHOULD_RATE_LIMIT = "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit";
    /** {@code REFUSED_STREAM}: the server did not take the stream (RFC 9113 §7). */
    static final int REFUSED_STREAM = 7;
    /** {@code ENHANCE_YOUR_CALM}: the server's answer to an abusive peer. */
    static final int ENHANCE_YOUR_CALM = 11;

    private static final int DATA = 0;
    private static final int HEADERS = 1;
    private static final int RST_STREAM = 3;
    private static final int SETTINGS = 4;
    private static final int PING = 6;
    private static final int GOAWAY = 7;
    private static final int WINDOW_UPDATE = 8;
    private static final int CONTINUATION = 9;
    private static final int END_STREAM = 0x1;
    private static final int END_HEADERS = 0x4;
    private static final int PADDED = 0x8;
    private static final int PRIORITY = 0x20;

    /** How a stream ended: {@code grpc-status} (0 and up), or −1 − the error code of the server's RST_STREAM. */
    final ConcurrentHashMap<Integer, Integer> ended = new ConcurrentHashMap<>();

    /** An HTTP answer on one stream: its headers ({@code :status} among them) and its body as far as it came. */
    record HttpAnswer(Map<String, String> headers, ByteArrayOutputStream body) {
        int status() {
            return Integer.parseInt(headers.get(":status"));
        }

        String text() {
            return body.toString(StandardCharsets.UTF_8);
        }
    }

    /** The HTTP answers by stream, once their headers came. */
    final ConcurrentHashMap<Integer, HttpAnswer> answers = new ConcurrentHashMap<>();

    /** The streams the server ended (END_STREAM): their answers are whole. */
    final Set<Integer> answered = ConcurrentHashMap.newKeySet();

    /** The error code of the server's RST_STREAM, by stream. */
    final ConcurrentHashMap<Integer, Integer> resets = new ConcurrentHashMap<>();

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    private final Thread reader;
    private final CountDownLatch settings = new CountDownLatch(1);
    private final DefaultHttp2HeadersDecoder hpack = new DefaultHttp2HeadersDecoder(false);
    private volatile long maxConcurrentStreams = -1;
    private volatile int goAwayError = -1;
    /** The error codes of every GOAWAY the server sent, in order. */
    private final List<Integer> goAwayErrors = new CopyOnWriteArrayList<>();

    private volatile boolean closedByServer;
    private int nextStream = 1;

    RawHttp2(int port) throws IOException {
        this(port, Integer.MAX_VALUE);
    }

    /**
     * A client whose streams take at most {@code streamWindow} bytes of an answer's body (its
     * SETTINGS_INITIAL_WINDOW_SIZE; it never gives more): 0 for a client that takes no answer's body.
     */
    RawHttp2(int port, int streamWindow) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setTcpNoDelay(true);
        out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
        in = new DataInputStream(socket.getInputStream());
        out.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        // SETTINGS_INITIAL_WINDOW_SIZE (4), by default at its largest, and the connection's window as large.
        byte[] window = int32(streamWindow);
        frame(SETTINGS, 0, 0, new byte[] {0, 4, window[0], window[1], window[2], window[3]});
        frame(WINDOW_UPDATE, 0, 0, int32(Integer.MAX_VALUE - 65_535));
        out.flush();
        reader = new Thread(this::read, "raw-http2-reader");
        reader.setDaemon(true);
        reader.start();
        try {
            if (!settings.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("no SETTINGS from the server in 30 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The server's SETTINGS_MAX_CONCURRENT_STREAMS, or −1 if it sent none. */
    long maxConcurrentStreams() {
        return maxConcurrentStreams;
    }

    /** The error code of the server's GOAWAY, or −1 if it sent none. */
    int goAwayError() {
        return goAwayError;
    }

    /** The error codes of every GOAWAY the server sent, in order (a server may send a second, with another code). */
    List<Integer> goAwayErrors() {
        return List.copyOf(goAwayErrors);
    }

    /** Whether the server closed the connection. */
    boolean closedByServer() {
        return closedByServer;
    }

    /** Opens a stream and sends {@code message} as its one gRPC message, ending the stream; returns its id. */
    int call(String path, byte[] message) throws IOException {
        int id = open(path, false);
        send(id, message);
        return id;
    }

    /** Opens a stream with its headers only and holds it open, its message not sent; returns its id. */
    int openHeld(String path) throws IOException {
        return open(path, false);
    }

    /** Opens a stream and ends it with its headers, without a message; returns its id. */
    int openEmpty(String path) throws IOException {
        return open(path, true);
    }

    /** Sends {@code message} as the one gRPC message of the open stream {@code id}, ending the stream. */
    void send(int id, byte[] message) throws IOException {
        message(id, message, true);
    }

    /** Sends {@code message} as a gRPC message of the open stream {@code id}, leaving the stream open. */
    void sendMore(int id, byte[] message) throws IOException {
        message(id, message, false);
    }

    private void message(int id, byte[] message, boolean endStream) throws IOException {
        byte[] data = new byte[5 + message.length];
        data[1] = (byte) (message.length >>> 24);
        data[2] = (byte) (message.length >>> 16);
        data[3] = (byte) (message.length >>> 8);
        data[4] = (byte) message.length;
        System.arraycopy(message, 0, data, 5, message.length);
        frame(DATA, endStream ? END_STREAM : 0, id, data);
    }

    /** Sends {@code payload} as one DATA frame of the open stream {@code id}, as it is: no gRPC framing added. */
    void data(int id, byte[] payload, boolean endStream) throws IOException {
        frame(DATA, endStream ? END_STREAM : 0, id, payload);
    }

    /** Opens a stream with its headers only; returns its id. */
    int open(String path) throws IOException {
        return open(path, false);
    }

    /** Opens a stream and resets it at once ({@code CANCEL}), as the rapid-reset attack does; returns its id. */
    int openAndReset(String path) throws IOException {
        int id = open(path, false);
        frame(RST_STREAM, 0, id, int32(8));
        return id;
    }

    void flush() throws IOException {
        out.flush();
    }

    /**
     * Opens a stream for a plain HTTP request ({@code content-type: application/json}, and {@code content-length} if
     * given), ending it with its headers if {@code endStream}; returns its id.
     */
    int request(String method, String path, long contentLength, boolean endStream) throws IOException {
        return request(method, path, contentLength, endStream, "");
    }

    /**
     * {@link #request(String, String, long, boolean)} with one more header, {@code x-extra: extra} (none if empty),
     * the header block split into CONTINUATION frames where it passes the default frame size of 16,384 bytes.
     */
    int request(String method, String path, long contentLength, boolean endStream, String extra) throws IOException {
        int id = nextStream;
        nextStream += 2;
        ByteArrayOutputStream h = new ByteArrayOutputStream(128);
        switch (method) {
            case "GET" -> h.write(0x82); // static table 2
            case "POST" -> h.write(0x83); // 3
            default -> literal(h, 4, 2, method);
        }
        h.write(0x86); // :scheme http
        literal(h, 4, 4, path);
        literal(h, 4, 1, "localhost");
        literal(h, 4, 31, "application/json");
        if (contentLength >= 0) {
            literal(h, 4, 28, Long.toString(contentLength)); // content-length (28)
        }
        if (!extra.isEmpty()) {
            h.write(0x00); // a literal name
            string(h, "x-extra");
            string(h, extra);
        }
        byte[] block = h.toByteArray();
        int max = 16_384;
        if (block.length <= max) {
            frame(HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), id, block);
            return id;
        }
        for (int from = 0; from < block.length; from += max) {
            byte[] part = Arrays.copyOfRange(block, from, Math.min(block.length, from + max));
            boolean last = from + max >= block.length;
            if (from == 0) {
                frame(HEADERS, endStream ? END_STREAM : 0, id, part);
            } else {
                frame(CONTINUATION, last ? END_HEADERS : 0, id, part);
            }
        }
        return id;
    }

    private int open(String path, boolean endStream) throws IOException {
        int id = nextStream;
        nextStream += 2;
        ByteArrayOutputStream h = new ByteArrayOutputStream(128);
        h.write(0x83); // :method POST (static table 3)
        h.write(0x86); // :scheme http (6)
        literal(h, 4, 4, path); // :path, name from the static table
        literal(h, 4, 1, "localhost"); // :authority
        literal(h, 4, 31, "application/grpc"); // content-type
        h.write(0x00); // a literal name
        string(h, "te");
        string(h, "trailers");
        frame(HEADERS, END_HEADERS | (endStream ? END_STREAM : 0), id, h.toByteArray());
        return id;
    }

    /** A literal header field without indexing whose name is the static table's entry {@code index}. */
    private static void literal(ByteArrayOutputStream h, int prefixBits, int index, String value) {
        integer(h, 0, prefixBits, index);
        string(h, value);
    }

    private static void string(ByteArrayOutputStream h, String s) {
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        integer(h, 0, 7, b.length); // not Huffman-coded
        h.write(b, 0, b.length);
    }

    /** An HPACK integer (RFC 7541 §5.1) with an N-bit prefix after the bits of {@code first}. */
    private static void integer(ByteArrayOutputStream h, int first, int prefixBits, int value) {
        int max = (1 << prefixBits) - 1;
        if (value < max) {
            h.write(first | value);
            return;
        }
        h.write(first | max);
        value -= max;
        while (value >= 128) {
            h.write((value & 0x7f) | 0x80);
            value >>>= 7;
        }
        h.write(value);
    }

    private synchronized void frame(int type, int flags, int stream, byte[] payload) throws IOException {
        out.write(payload.length >>> 16);
        out.write(payload.length >>> 8);
        out.write(payload.length);
        out.write(type);
        out.write(flags);
        out.write(int32(stream));
        out.write(payload);
    }

    private static byte[] int32(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    private void read() {
        ByteArrayOutputStream block = new ByteArrayOutputStream();
        int blockStream = 0;
        boolean blockEnds = false;
        try {
            while (true) {
                int length = (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
                int type = in.readUnsignedByte();
                int flags = in.readUnsignedByte();
                int stream = in.readInt() & 0x7fff_ffff;
                byte[] payload = new byte[length];
                in.readFully(payload);
                switch (type) {
                    case SETTINGS -> {
                        if ((flags & 0x1) == 0) {
                            for (int i = 0; i + 6 <= length; i += 6) {
                                int id = ((payload[i] & 0xff) << 8) | (payload[i + 1] & 0xff);
                                long value = readInt(payload, i + 2) & 0xffff_ffffL;
                                if (id == 3) {
                                    maxConcurrentStreams = value;
                                }
                            }
                            frame(SETTINGS, 0x1, 0, new byte[0]);
                            flush();
                            settings.countDown();
                        }
                    }
                    case PING -> {
                        if ((flags & 0x1) == 0) {
                            frame(PING, 0x1, 0, payload);
                            flush();
                        }
                    }
                    case HEADERS, CONTINUATION -> {
                        int from = 0;
                        int to = length;
                        if (type == HEADERS) {
                            if ((flags & PADDED) != 0) {
                                to -= payload[0] & 0xff;
                                from++;
                            }
                            if ((flags & PRIORITY) != 0) {
                                from += 5;
                            }
                            blockStream = stream;
                            blockEnds = (flags & END_STREAM) != 0;
                        }
                        block.write(payload, from, to - from);
                        if ((flags & END_HEADERS) != 0) {
                            headers(blockStream, blockEnds, block.toByteArray());
                            block.reset();
                        }
                    }
                    case RST_STREAM -> {
                        resets.put(stream, readInt(payload, 0));
                        ended.putIfAbsent(stream, -1 - readInt(payload, 0));
                    }
                    case DATA -> {
                        HttpAnswer a = answers.get(stream);
                        if (a != null) {
                            int from = (flags & PADDED) != 0 ? 1 : 0;
                            int to = length - ((flags & PADDED) != 0 ? payload[0] & 0xff : 0);
                            a.body().write(payload, from, to - from);
                        }
                        if ((flags & END_STREAM) != 0) {
                            answered.add(stream);
                        }
                    }
                    case GOAWAY -> {
                        goAwayError = readInt(payload, 4);
                        goAwayErrors.add(goAwayError);
                    }
                    default -> {
                        // WINDOW_UPDATE
                    }
                }
            }
        } catch (EOFException e) {
            closedByServer = true;
        } catch (IOException e) {
            closedByServer = !socket.isClosed();
        } finally {
            settings.countDown();
        }
    }

    private void headers(int stream, boolean endsStream, byte[] block) throws IOException {
        Http2Headers h;
        try {
            h = hpack.decodeHeaders(stream, Unpooled.wrappedBuffer(block));
        } catch (Http2Exception e) {
            throw new UncheckedIOException(new IOException("undecodable headers from the server", e));
        }
        CharSequence status = h.get("grpc-status");
        if (h.status() != null) {
            Map<String, String> fields = new LinkedHashMap<>();
            h.forEach(e -> fields.put(e.getKey().toString(), e.getValue().toString()));
            answers.putIfAbsent(stream, new HttpAnswer(fields, new ByteArrayOutputStream()));
        }
        if (endsStream) {
            answered.add(stream);
            ended.putIfAbsent(stream, status == null ? -1000 : Integer.parseInt(status.toString()));
        }
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24) | ((b[at + 1] & 0xff) << 16) | ((b[at + 2] & 0xff) << 8) | (b[at + 3] & 0xff);
    }

    /** Waits until the reader has stopped (the server closed the connection) or {@code seconds} have passed. */
    void awaitClosed(long seconds) throws InterruptedException {
        reader.join(TimeUnit.SECONDS.toMillis(seconds));
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
