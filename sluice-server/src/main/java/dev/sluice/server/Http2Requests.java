package dev.sluice.server;

import dev.sluice.server.HttpTransport.Answer;
import dev.sluice.server.HttpTransport.Request;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerAdapter;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2ServerUpgradeCodec;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.util.AsciiString;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * One cleartext HTTP/2 connection of {@link HttpTransport} (h2c, by prior knowledge or by {@code Upgrade: h2c}): its
 * streams' requests, read in full within bounds, answered through {@link HttpTransport#dispatch} as HTTP/1.1's are.
 *
 * <p>Bounds: at most {@value #MAX_STREAMS} streams at once ({@code SETTINGS_MAX_CONCURRENT_STREAMS}; a stream past it
 * is refused by Netty's codec with {@code RST_STREAM REFUSED_STREAM}); headers of at most
 * {@link HttpTransport#MAX_HEADERS} bytes ({@code SETTINGS_MAX_HEADER_LIST_SIZE}; 431 beyond); a body of at most
 * {@link HttpTransport#MAX_BODY} bytes kept: one announced or sent beyond that is answered at once as the service
 * answers a body over the limit (413), and the rest of the stream refused with {@code RST_STREAM NO_ERROR}, which RFC
 * 9113 §8.1 provides for an answer given before the request has ended. The bodies in progress on one connection are
 * held to {@value #MAX_BUFFERED} bytes together: a stream that would pass it is answered 503. In time: a stream's
 * request must arrive in full within the read timeout of its headers (else 408 on that stream, the connection serving
 * on); a connection with no stream open is closed after the idle timeout; an answer the client does not take within
 * the idle timeout closes the connection. A graceful stop sends {@code GOAWAY}, answers the streams already open and
 * closes the connection once they are done (or after {@link HttpTransport#DRAIN}). Netty's codec guards the rest of
 * the protocol: the rapid-reset limit (200 {@code RST_STREAM} frames in 30 s), empty data frames, queued control
 * frames.
 *
 * <p>Thread-safety: runs on its connection's event loop only.
 */
// Netty's write futures carry no result to act on: a failed write closes the connection.
@SuppressWarnings("FutureReturnValueIgnored")
final class Http2Requests extends ChannelInboundHandlerAdapter {
    /** The most streams open at once on one connection. */
    static final int MAX_STREAMS = 100;

    /** The most request body bytes held at once on one connection, over all its streams. */
    static final long MAX_BUFFERED = 4L * HttpTransport.MAX_BODY;

    private static final System.Logger LOG = System.getLogger(Http2Requests.class.getName());

    /** One stream's request. */
    private static final class Stream {
        final Http2FrameStream stream;
        final Http2Headers headers;
        /** When it times out, in {@link System#nanoTime()}: the read timeout, then the idle timeout once answered. */
        long deadline;

        @Nullable
        CompositeByteBuf body;
        /** Body bytes sent so far, kept or not. */
        long bytes;
        /** Body bytes kept in {@link #body}. */
        long held;
        /** The client has ended its side of the stream. */
        boolean ended;
        /** An answer is being made or written: frames that still arrive are dropped. */
        boolean answering;

        Stream(Http2FrameStream stream, Http2Headers headers, long deadline) {
            this.stream = stream;
            this.headers = headers;
            this.deadline = deadline;
        }
    }

    private final HttpTransport transport;
    private final IntObjectHashMap<Stream> streams = new IntObjectHashMap<>();
    /** Body bytes held over all streams. */
    private long buffered;
    /** Between a read's first frame and its end: what is written then is flushed once, at the end. */
    private boolean reading;
    /** When the last stream was done, in {@link System#nanoTime()}. */
    private long idleSince = System.nanoTime();

    private @Nullable ScheduledFuture<?> timer;
    /** When the timer is set to fire; it re-arms itself for the earliest deadline when it fires. */
    private long timerAt;

    Http2Requests(HttpTransport transport) {
        this.transport = transport;
    }

    /** HTTP/2's codec for one connection, with the service's bounds. */
    static Http2FrameCodec codec() {
        return Http2FrameCodecBuilder.forServer()
                .initialSettings(Http2Settings.defaultSettings()
                        .maxConcurrentStreams(MAX_STREAMS)
                        .maxHeaderListSize(HttpTransport.MAX_HEADERS))
                .gracefulShutdownTimeoutMillis(HttpTransport.DRAIN.toMillis())
                .build();
    }

    /**
     * The handler of HTTP/1.1's {@code Upgrade: h2c}: it answers {@code 101 Switching Protocols} and puts HTTP/2's
     * codec and a new {@code Http2Requests} in place of HTTP/1.1's, the request being answered on stream 1. Only a
     * request that HTTP/1.1's codec read well, lists {@code h2c} among its upgrades, expects no {@code 100 Continue}
     * and announces a body within {@link HttpTransport#MAX_BODY} (not chunked) is taken up; every other request, an
     * upgrade to anything else among them, goes on as a plain HTTP/1.1 request (a server may ignore an upgrade), so
     * that it meets HTTP/1.1's bounds and answers.
     */
    static HttpServerUpgradeHandler upgrade(HttpServerCodec codec, HttpTransport transport) {
        return new HttpServerUpgradeHandler(
                codec,
                protocol -> AsciiString.contentEqualsIgnoreCase(Http2CodecUtil.HTTP_UPGRADE_PROTOCOL_NAME, protocol)
                        ? new Http2ServerUpgradeCodec(codec(), new Http2Requests(transport))
                        : null,
                HttpTransport.MAX_BODY) {
            @Override
            protected boolean shouldHandleUpgradeRequest(HttpRequest req) {
                HttpHeaders h = req.headers();
                if (!req.decoderResult().isSuccess()
                        || !h.containsValue(HttpHeaderNames.UPGRADE, Http2CodecUtil.HTTP_UPGRADE_PROTOCOL_NAME, true)
                        || h.contains(HttpHeaderNames.EXPECT)
                        || h.contains(HttpHeaderNames.TRANSFER_ENCODING)) {
                    return false;
                }
                try {
                    long length = HttpUtil.getContentLength(req, 0L);
                    return length >= 0 && length <= HttpTransport.MAX_BODY;
                } catch (NumberFormatException e) {
                    return false;
                }
            }
        };
    }

    /**
     * The handler that, on a client's HTTP/2 preface (prior knowledge), puts HTTP/2's codec and a new
     * {@code Http2Requests} in its own place.
     */
    static ChannelHandler priorKnowledge(HttpTransport transport) {
        return new ChannelHandlerAdapter() {
            @Override
            public void handlerAdded(ChannelHandlerContext ctx) {
                ctx.pipeline()
                        .addAfter(ctx.name(), null, new Http2Requests(transport))
                        .addAfter(ctx.name(), null, codec())
                        .remove(this);
            }
        };
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        for (String name : List.of(HttpTransport.BYTES, HttpTransport.ONE_AT_A_TIME, HttpTransport.REQUESTS)) {
            if (ctx.pipeline().get(name) != null) {
                ctx.pipeline().remove(name);
            }
        }
        // HTTP/2's flow control bounds what a client sends; HTTP/1.1's one-request-at-a-time reading no longer applies.
        ctx.channel().config().setAutoRead(true);
        idleSince = System.nanoTime();
        arm(ctx, idleSince + transport.idleTimeout());
        if (transport.draining()) {
            ctx.close();
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        reading = true;
        try {
            if (msg instanceof Http2HeadersFrame h) {
                headers(ctx, h);
            } else if (msg instanceof Http2DataFrame d) {
                data(ctx, d);
            } else if (msg instanceof Http2ResetFrame r) {
                Stream s = streams.remove(r.stream().id());
                if (s != null) {
                    release(s);
                    done(ctx);
                }
            }
            // SETTINGS, PING, GOAWAY, WINDOW_UPDATE: the codec has acted on them already.
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    /** Flushes, once for all the read's frames, the flow-control credit given back and the answers made inline. */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        reading = false;
        ctx.flush();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt == HttpTransport.DRAINING) {
            ctx.close(); // the codec sends GOAWAY and closes once the open streams are answered
        } else {
            ctx.fireUserEventTriggered(evt);
        }
    }

    /**
     * Closes the connection on a failure of its own; an HTTP/2 protocol error is left to the codec, which shows it here
     * first and then answers it (a {@code GOAWAY} with its error code: {@code ENHANCE_YOUR_CALM} for a flood of
     * resets), which a close from here would pre-empt with a graceful {@code GOAWAY NO_ERROR}.
     */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        LOG.log(System.Logger.Level.DEBUG, "HTTP/2 connection failed: " + cause);
        if (Http2CodecUtil.getEmbeddedHttp2Exception(cause) == null) {
            ctx.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        ScheduledFuture<?> t = timer;
        if (t != null) {
            t.cancel(false);
            timer = null;
        }
        for (Stream s : streams.values()) {
            release(s);
        }
        streams.clear();
        ctx.fireChannelInactive();
    }

    private void headers(ChannelHandlerContext ctx, Http2HeadersFrame f) {
        int id = f.stream().id();
        Stream s = streams.get(id);
        if (s != null) { // trailers
            if (f.isEndStream() && !s.answering) {
                s.ended = true;
                complete(ctx, s);
            }
            return;
        }
        s = new Stream(f.stream(), f.headers(), System.nanoTime() + transport.readTimeout());
        s.ended = f.isEndStream();
        streams.put(id, s);
        long announced = announced(f.headers().get(HttpHeaderNames.CONTENT_LENGTH));
        if (announced > HttpTransport.MAX_BODY) {
            s.bytes = announced;
            complete(ctx, s);
        } else if (s.ended) {
            complete(ctx, s);
        } else {
            arm(ctx, s.deadline);
        }
    }

    /** The body's length as {@code content-length} announces it; −1 if it is absent or not a number. */
    private static long announced(@Nullable CharSequence length) {
        if (length == null) {
            return -1;
        }
        try {
            return Long.parseLong(length.toString());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private void data(ChannelHandlerContext ctx, Http2DataFrame f) {
        int credit = f.initialFlowControlledBytes();
        if (credit > 0) { // given back at once: MAX_BUFFERED, not the window, bounds what is held
            ctx.write(new DefaultHttp2WindowUpdateFrame(credit).stream(f.stream()));
        }
        Stream s = streams.get(f.stream().id());
        if (s == null || s.answering) {
            return; // after an early answer: dropped
        }
        s.ended = f.isEndStream();
        ByteBuf data = f.content();
        int n = data.readableBytes();
        s.bytes += n;
        if (s.bytes > HttpTransport.MAX_BODY) {
            complete(ctx, s); // the body is dropped there: the service answers as for any body over the limit
            return;
        }
        if (n > 0) {
            if (buffered + n > MAX_BUFFERED) {
                answer(
                        ctx,
                        s,
                        Answer.error(
                                        503,
                                        "the connection has " + MAX_BUFFERED
                                                + " bytes of request bodies in progress: try again, or on another connection")
                                .with("Retry-After", "1"));
                return;
            }
            CompositeByteBuf b = s.body;
            if (b == null) {
                b = ctx.alloc().compositeBuffer(64);
                s.body = b;
            }
            b.addComponent(true, data.retain());
            s.held += n;
            buffered += n;
        }
        if (s.ended) {
            complete(ctx, s);
        }
    }

    /** The request has arrived (or its body went over the limit): answer it. */
    private void complete(ChannelHandlerContext ctx, Stream s) {
        byte[] body = null;
        CompositeByteBuf b = s.body;
        if (s.bytes <= HttpTransport.MAX_BODY) {
            body = new byte[b == null ? 0 : b.readableBytes()];
            if (b != null) {
                b.readBytes(body);
            }
        }
        release(s);
        s.answering = true;
        s.deadline = System.nanoTime() + transport.idleTimeout();
        Http2Headers h = s.headers;
        CharSequence method = h.method();
        CharSequence target = h.path();
        if (method == null || target == null) {
            answer(ctx, s, Answer.error(400, "an HTTP/2 request without :method or :path"));
            return;
        }
        String path;
        try {
            path = HttpTransport.path(target.toString());
        } catch (URISyntaxException e) {
            answer(ctx, s, Answer.error(400, "not a valid request URI: " + e.getMessage()));
            return;
        }
        HttpHeaders headers = new DefaultHttpHeaders();
        for (Map.Entry<CharSequence, CharSequence> e : h) {
            CharSequence name = e.getKey();
            if (name.length() > 0 && name.charAt(0) != ':') {
                headers.add(name, e.getValue());
            }
        }
        CharSequence authority = h.authority();
        if (authority != null && !headers.contains(HttpHeaderNames.HOST)) {
            headers.set(HttpHeaderNames.HOST, authority);
        }
        Request r = new Request(method.toString(), path, headers, body, System.nanoTime());
        transport.dispatch(ctx, r, a -> answer(ctx, s, a));
    }

    private void answer(ChannelHandlerContext ctx, Stream s, Answer a) {
        s.answering = true;
        release(s);
        if (!ctx.channel().isActive() || streams.get(s.stream.id()) != s) {
            return; // reset by the client, or the connection closed, meanwhile
        }
        Http2Headers out = new DefaultHttp2Headers()
                .status(HttpResponseStatus.valueOf(a.status()).codeAsText())
                .set(HttpHeaderNames.CONTENT_TYPE, a.contentType())
                .setInt(HttpHeaderNames.CONTENT_LENGTH, a.body().length);
        a.headers().forEach((name, value) -> out.set(AsciiString.of(name).toLowerCase(), value));
        boolean headersOnly = a.body().length == 0 || AsciiString.contentEquals("HEAD", s.headers.method());
        ChannelFuture written = ctx.write(new DefaultHttp2HeadersFrame(out, headersOnly).stream(s.stream));
        if (!headersOnly) {
            written = ctx.write(new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(a.body()), true).stream(s.stream));
        }
        if (!reading) {
            ctx.flush();
        }
        written.addListener(f -> {
            if (f.isSuccess() && !s.ended && ctx.channel().isActive()) {
                // answered before the request ended: the client need send no more of it (RFC 9113 §8.1)
                ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.NO_ERROR).stream(s.stream));
            }
            if (streams.get(s.stream.id()) == s) {
                streams.remove(s.stream.id());
                done(ctx);
            }
        });
    }

    private void release(Stream s) {
        CompositeByteBuf b = s.body;
        if (b != null) {
            buffered -= s.held;
            s.held = 0;
            b.release();
            s.body = null;
        }
    }

    /** A stream is done: with none left open, the idle timeout runs. */
    private void done(ChannelHandlerContext ctx) {
        if (streams.isEmpty()) {
            idleSince = System.nanoTime();
            arm(ctx, idleSince + transport.idleTimeout());
        }
    }

    private void arm(ChannelHandlerContext ctx, long at) {
        ScheduledFuture<?> t = timer;
        if (t != null && at - timerAt >= 0) {
            return;
        }
        if (t != null) {
            t.cancel(false);
        }
        timerAt = at;
        timer = ctx.executor().schedule(() -> tick(ctx), Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    private void tick(ChannelHandlerContext ctx) {
        timer = null;
        if (!ctx.channel().isActive()) {
            return;
        }
        long now = System.nanoTime();
        if (streams.isEmpty()) {
            long at = idleSince + transport.idleTimeout();
            if (now - at >= 0) {
                ctx.close();
            } else {
                arm(ctx, at);
            }
            return;
        }
        List<Stream> late = new ArrayList<>();
        long next = Long.MAX_VALUE;
        boolean any = false;
        for (Stream s : streams.values()) {
            if (now - s.deadline >= 0) {
                if (s.answering) { // the client does not take its answer
                    ctx.close();
                    return;
                }
                late.add(s);
            } else if (!any || s.deadline - next < 0) {
                next = s.deadline;
                any = true;
            }
        }
        for (Stream s : late) {
            answer(
                    ctx,
                    s,
                    Answer.error(
                            408,
                            "the request did not arrive in full within " + HttpTransport.millis(transport.readTimeout())
                                    + " of its headers"));
            s.deadline = now + transport.idleTimeout();
            next = any && next - s.deadline < 0 ? next : s.deadline;
            any = true;
        }
        if (any) {
            arm(ctx, next);
        }
    }
}
