package dev.sluice.server;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerUpgradeHandler;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.codec.http2.CleartextHttp2ServerUpgradeHandler;
import io.netty.handler.flow.FlowControlHandler;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The HTTP server under {@link HttpApi}, on Netty: it reads requests in full within bounds, hands each to a
 * {@link Handler} on the connection's event loop (answered there, or when the stage it gives completes) or on a
 * bounded pool, writes the answers, and stops gracefully. It speaks HTTP/1.1, and cleartext HTTP/2 (h2c) to a client
 * that opens with HTTP/2's preface (prior knowledge) or asks for {@code Upgrade: h2c}; {@link Http2Requests} serves
 * such a connection, with its own bounds per stream.
 *
 * <p>HTTP/1.1's bounds, per connection: one request at a time (pipelined requests wait, unread, until the one before is
 * answered); a request line of at most {@value #MAX_LINE} bytes and headers of at most {@value #MAX_HEADERS}; a body of
 * at most {@link #MAX_BODY} bytes kept (a larger one is read and dropped up to {@link #MAX_DRAIN} bytes and answered
 * 413, so a client still sending reads the answer; one announced or sent beyond that is answered 413 at once and the
 * connection closed). In time: a request must arrive in full within the read timeout of its first byte (else 408 and
 * the connection closed); a connection with no request in progress is closed after the idle timeout; an answer the
 * client does not take within the idle timeout closes the connection. The pool has a bounded queue; beyond it the
 * handler's {@link Handler#busy} answer is sent at once.
 *
 * <p>Thread-safety: {@link #close()} may be called from any thread; everything else runs on Netty's threads.
 */
// Netty's close and write futures carry no result to act on: a failed write closes the connection, which is all that
// could be done about it.
@SuppressWarnings("FutureReturnValueIgnored")
final class HttpTransport implements AutoCloseable {
    /** The largest request body kept; a larger one is answered 413. */
    static final int MAX_BODY = 1 << 20;

    /**
     * How much of a body over {@link #MAX_BODY} is read and dropped before the 413, so that a client still sending reads
     * the answer instead of a broken connection; a body announced larger than this is refused at once.
     */
    static final long MAX_DRAIN = 16L << 20;

    /** The longest request line, in bytes; a longer one is answered 414. */
    static final int MAX_LINE = 8192;

    /** The most header bytes of a request; more are answered 431. */
    static final int MAX_HEADERS = 16384;

    /** How long a graceful stop waits for open connections to end before closing them. */
    static final Duration DRAIN = Duration.ofSeconds(5);

    /** During a graceful stop, a connection with no request in progress is closed once idle this long. */
    static final Duration DRAIN_IDLE = Duration.ofSeconds(1);

    /** The names of the HTTP/1.1 handlers that an HTTP/2 connection removes. */
    static final String BYTES = "bytes";

    static final String ONE_AT_A_TIME = "one-at-a-time";
    static final String REQUESTS = "requests";

    /** The event a graceful stop sends down every open connection. */
    static final Object DRAINING = new Object();

    private static final System.Logger LOG = System.getLogger(HttpTransport.class.getName());
    private static final String JSON = "application/json";

    /**
     * A request read in full.
     *
     * @param path    the URI's path, percent-decoded ({@code /} if it has none)
     * @param body    the body, or null if it was larger than {@link #MAX_BODY}
     * @param arrived {@link System#nanoTime()} when it had arrived in full
     */
    @SuppressWarnings("ArrayRecordComponent") // never compared; the bytes are handed over, not shared
    record Request(String method, String path, HttpHeaders headers, byte @Nullable [] body, long arrived) {}

    /** An answer: status, content type, body, and any further headers. */
    @SuppressWarnings("ArrayRecordComponent") // never compared; the bytes are handed over, not shared
    record Answer(int status, String contentType, byte[] body, Map<String, String> headers) {
        static Answer of(int status, String contentType, String body) {
            return new Answer(status, contentType, body.getBytes(StandardCharsets.UTF_8), Map.of());
        }

        /** A JSON error body, {@code {"error":"…"}}, as every error of the service is answered. */
        static Answer error(int status, String message) {
            return of(status, JSON, "{\"error\":" + JsonString.quote(message) + "}");
        }

        Answer with(String header, String value) {
            Map<String, String> h = new LinkedHashMap<>(headers);
            h.put(header, value);
            return new Answer(status, contentType, body, Map.copyOf(h));
        }
    }

    /** What the server asks of the service. */
    interface Handler {
        /** Whether answering {@code r} may wait (on a store, on files) or take long: then it runs on the pool. */
        boolean blocking(Request r);

        /** The answer to {@code r}; may be called on an event loop if {@link #blocking} said no. */
        Answer answer(Request r);

        /**
         * The answer to {@code r} when it may come later without holding a thread (a decision that reaches the store),
         * or null to be answered by {@link #answer}. Called on an event loop when {@link #blocking} said no; must not
         * block. The stage may complete on any thread; the answer is written on the connection's event loop.
         */
        default @Nullable CompletionStage<Answer> answerLater(Request r) {
            return null;
        }

        /** The answer when the pool's queue is full. */
        Answer busy(Request r);
    }

    private final Handler handler;
    private final long readTimeout;
    private final long idleTimeout;
    private final EventLoopGroup acceptor;
    private final EventLoopGroup loops;
    private final ThreadPoolExecutor pool;
    private final ChannelGroup connections = new DefaultChannelGroup("sluice-http", GlobalEventExecutor.INSTANCE);
    private final Channel listener;
    private volatile boolean draining;

    /**
     * Binds {@code address} and starts serving.
     *
     * @param threads     the pool's threads, for the {@link Handler#blocking} requests
     * @param readTimeout how long a request may take to arrive in full, from its first byte
     * @param idleTimeout how long a connection may stay open with no request in progress
     * @throws IOException if the address cannot be bound
     */
    HttpTransport(InetSocketAddress address, int threads, Duration readTimeout, Duration idleTimeout, Handler handler)
            throws IOException {
        this.handler = handler;
        this.readTimeout = readTimeout.toNanos();
        this.idleTimeout = idleTimeout.toNanos();
        AtomicInteger n = new AtomicInteger();
        this.pool = new ThreadPoolExecutor(
                threads,
                threads,
                60,
                TimeUnit.SECONDS,
                new ArrayBlockingQueue<>(1024),
                r -> {
                    Thread t = new Thread(r, "sluice-http-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                },
                new ThreadPoolExecutor.AbortPolicy());
        this.acceptor = new NioEventLoopGroup(1, new DefaultThreadFactory("sluice-http-accept", true));
        this.loops = new NioEventLoopGroup(0, new DefaultThreadFactory("sluice-http-io", true));
        ServerBootstrap b = new ServerBootstrap()
                .group(acceptor, loops)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.AUTO_READ, false)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        connections.add(ch);
                        Connection c = new Connection();
                        HttpServerCodec codec = new HttpServerCodec(MAX_LINE, MAX_HEADERS, 8192);
                        HttpServerUpgradeHandler upgrade = Http2Requests.upgrade(codec, HttpTransport.this);
                        // The h2c handler puts HTTP/1.1's codec and upgrade handler after itself, and on a client's
                        // HTTP/2 preface replaces them with HTTP/2's; Http2Requests then removes the HTTP/1.1 handlers.
                        ch.pipeline()
                                .addLast(BYTES, c.bytes)
                                .addLast(
                                        "h2c",
                                        new CleartextHttp2ServerUpgradeHandler(
                                                codec, upgrade, Http2Requests.priorKnowledge(HttpTransport.this)))
                                .addLast(ONE_AT_A_TIME, new FlowControlHandler())
                                .addLast(REQUESTS, c);
                    }
                });
        ChannelFuture bound = b.bind(address).awaitUninterruptibly();
        if (!bound.isSuccess()) {
            stopThreads();
            Throwable cause = bound.cause();
            throw cause instanceof IOException io ? io : new IOException(String.valueOf(cause), cause);
        }
        this.listener = bound.channel();
    }

    int port() {
        return ((InetSocketAddress) listener.localAddress()).getPort();
    }

    /** How long a request may take to arrive in full, from its first byte, in nanoseconds. */
    long readTimeout() {
        return readTimeout;
    }

    /** How long a connection may stay open with no request in progress, in nanoseconds. */
    long idleTimeout() {
        return idleTimeout;
    }

    /**
     * Answers {@code r}: on the calling event loop if the handler needs no waiting, else on the pool (or at once with
     * the handler's {@link Handler#busy} answer when the pool's queue is full). {@code reply} runs on {@code ctx}'s
     * event loop; not at all if the server stopped meanwhile.
     */
    void dispatch(ChannelHandlerContext ctx, Request r, Consumer<Answer> reply) {
        if (!handler.blocking(r)) {
            CompletionStage<Answer> later;
            try {
                later = handler.answerLater(r);
            } catch (RuntimeException | Error e) { // answered 500: a request is never left without an answer
                later = CompletableFuture.completedFuture(failed(r, e));
            }
            if (later == null) {
                reply.accept(answer(r));
                return;
            }
            var unused = later.whenComplete((a, e) -> {
                Answer answer = e == null ? a : failed(r, e);
                if (ctx.executor().inEventLoop()) {
                    reply.accept(answer);
                    return;
                }
                try {
                    ctx.executor().execute(() -> reply.accept(answer));
                } catch (RejectedExecutionException stopped) {
                    LOG.log(System.Logger.Level.DEBUG, "an answer after the HTTP server stopped: " + r.path());
                }
            });
            return;
        }
        try {
            pool.execute(() -> {
                Answer a = answer(r);
                try {
                    ctx.executor().execute(() -> reply.accept(a));
                } catch (RejectedExecutionException e) {
                    LOG.log(System.Logger.Level.DEBUG, "an answer after the HTTP server stopped: " + r.path());
                }
            });
        } catch (RejectedExecutionException e) {
            reply.accept(handler.busy(r));
        }
    }

    private Answer answer(Request r) {
        try {
            return handler.answer(r);
        } catch (RuntimeException | Error e) { // a bug's or the VM's (a stack overflow): answered 500, not dropped
            return failed(r, e);
        }
    }

    private static Answer failed(Request r, Throwable e) {
        LOG.log(System.Logger.Level.ERROR, "HTTP request failed: " + r.method() + " " + r.path(), e);
        return Answer.error(500, "the request failed: " + e);
    }

    /** The percent-decoded path of a request target ({@code /} if it has none). */
    static String path(String target) throws URISyntaxException {
        String path = new URI(target).getPath();
        return path == null || path.isEmpty() ? "/" : path;
    }

    /** Whether the server is stopping gracefully: answers then close their connection. */
    boolean draining() {
        return draining;
    }

    /**
     * Stops gracefully: no new connection is accepted; a request in progress, or arriving on an open connection, is
     * answered with {@code Connection: close} and its connection closed; a connection idle for {@link #DRAIN_IDLE} is
     * closed; after {@link #DRAIN}, whatever is still open is closed. Idempotent.
     */
    @Override
    public void close() {
        if (draining) {
            return;
        }
        draining = true;
        listener.close().awaitUninterruptibly();
        for (Channel c : connections) {
            c.pipeline().fireUserEventTriggered(DRAINING);
        }
        if (!connections.newCloseFuture().awaitUninterruptibly(DRAIN.toMillis())) {
            connections.close().awaitUninterruptibly(1000);
        }
        stopThreads();
    }

    private void stopThreads() {
        pool.shutdown();
        acceptor.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        loops.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2000);
    }

    /** A duration as {@code serve}'s options are written: {@code 10s}, {@code 1500ms}. */
    static String millis(long nanos) {
        long ms = TimeUnit.NANOSECONDS.toMillis(nanos);
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }

    private enum State {
        /** No request in progress: the idle timeout runs. */
        IDLE,
        /** Part of a request has arrived: the read timeout runs from its first byte. */
        READING,
        /** The request is being answered: the idle timeout bounds a client that does not take the answer. */
        ANSWERING
    }

    /** One connection: its requests, one at a time, and its timeouts. Runs on its event loop only. */
    private final class Connection extends ChannelInboundHandlerAdapter {
        /** Sees the bytes before the codec: the first byte of a request starts its read timeout. */
        final ChannelInboundHandlerAdapter bytes = new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                if (state == State.IDLE && msg instanceof ByteBuf b && b.isReadable()) {
                    if (b.getByte(b.readerIndex()) == 0x16) { // a TLS record: a ClientHello to the plain port
                        b.release();
                        rawAnswer(ctx, 400, "this port speaks plain HTTP/1.1, not TLS");
                        return;
                    }
                    reading(ctx);
                }
                ctx.fireChannelRead(msg);
            }
        };

        private State state = State.IDLE;
        /** When the current state times out, in {@link System#nanoTime()}. */
        private long deadline;
        /** When the timer is set to fire; it re-arms itself if the deadline moved later. */
        private long timerAt;

        private @Nullable ScheduledFuture<?> timer;
        private @Nullable HttpRequest head;
        private @Nullable CompositeByteBuf body;
        private long bodyBytes;
        /** The body went over {@link #MAX_DRAIN}: answer now, read no more, close after. */
        private boolean cutOff;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            idle(ctx);
            ctx.read();
            ctx.fireChannelActive();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            stop();
            ctx.fireChannelInactive();
        }

        /** Removed when the connection turns to HTTP/2. */
        @Override
        public void handlerRemoved(ChannelHandlerContext ctx) {
            stop();
        }

        private void stop() {
            ScheduledFuture<?> t = timer;
            if (t != null) {
                t.cancel(false);
                timer = null;
            }
            reset();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt == DRAINING) {
                if (state == State.IDLE) {
                    deadline(ctx, Math.min(deadline, System.nanoTime() + DRAIN_IDLE.toNanos()));
                }
            } else {
                ctx.fireUserEventTriggered(evt);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.log(System.Logger.Level.DEBUG, "HTTP connection failed: " + cause);
            ctx.close();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            try {
                if (state == State.ANSWERING || cutOff) {
                    return; // only after a cut-off body: the connection closes after its answer
                }
                if (msg instanceof HttpRequest h) {
                    start(ctx, h);
                }
                if (head != null && msg instanceof HttpContent c) {
                    content(ctx, c);
                }
                if (state == State.READING) {
                    ctx.read();
                }
            } finally {
                ReferenceCountUtil.release(msg);
            }
        }

        private void start(ChannelHandlerContext ctx, HttpRequest h) {
            if (state == State.IDLE) {
                reading(ctx);
            }
            if (h.decoderResult().isFailure()) {
                Throwable cause = h.decoderResult().cause();
                int status = cause instanceof TooLongHttpLineException
                        ? 414
                        : cause instanceof TooLongHttpHeaderException ? 431 : 400;
                String what = cause instanceof TooLongFrameException
                        ? "request line or headers over the limit (" + MAX_LINE + " and " + MAX_HEADERS + " bytes)"
                        : "not an HTTP/1.1 request: " + cause.getMessage();
                rawAnswer(ctx, status, what);
                return;
            }
            head = h;
            bodyBytes = 0;
            long announced = HttpUtil.getContentLength(h, -1L);
            if (announced > MAX_DRAIN || (HttpUtil.is100ContinueExpected(h) && announced > MAX_BODY)) {
                cutOff = true;
                complete(ctx);
                return;
            }
            if (HttpUtil.is100ContinueExpected(h)) {
                h.headers().remove(HttpHeaderNames.EXPECT);
                ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE));
            }
            body = ctx.alloc().compositeBuffer(64);
        }

        private void content(ChannelHandlerContext ctx, HttpContent c) {
            if (c.decoderResult().isFailure()) {
                rawAnswer(
                        ctx,
                        400,
                        "not an HTTP/1.1 request body: "
                                + c.decoderResult().cause().getMessage());
                return;
            }
            ByteBuf data = c.content();
            bodyBytes += data.readableBytes();
            CompositeByteBuf b = body;
            if (b != null && bodyBytes <= MAX_BODY) {
                if (data.isReadable()) {
                    b.addComponent(true, data.retain());
                }
            } else {
                if (b != null) {
                    b.release();
                    body = null;
                }
                if (bodyBytes > MAX_DRAIN) {
                    cutOff = true;
                    complete(ctx);
                    return;
                }
            }
            if (c instanceof LastHttpContent) {
                complete(ctx);
            }
        }

        /** The request has arrived (or its body was cut off): answer it inline or on the pool. */
        private void complete(ChannelHandlerContext ctx) {
            HttpRequest h = head;
            if (h == null) {
                return;
            }
            state = State.ANSWERING;
            deadline(ctx, System.nanoTime() + idleTimeout);
            byte[] bytes = null;
            CompositeByteBuf b = body;
            if (b != null && bodyBytes <= MAX_BODY && !cutOff) {
                bytes = new byte[b.readableBytes()];
                b.readBytes(bytes);
            }
            if (b != null) {
                b.release();
                body = null;
            }
            String path;
            try {
                path = path(h.uri());
            } catch (URISyntaxException e) {
                write(ctx, h, Answer.error(400, "not a valid request URI: " + e.getMessage()));
                return;
            }
            dispatch(
                    ctx,
                    new Request(h.method().name(), path, h.headers(), bytes, System.nanoTime()),
                    a -> write(ctx, h, a));
        }

        private void write(ChannelHandlerContext ctx, HttpRequest h, Answer a) {
            if (!ctx.channel().isActive()) {
                return;
            }
            boolean keepAlive = HttpUtil.isKeepAlive(h) && !cutOff && !draining;
            boolean headRequest = h.method().equals(HttpMethod.HEAD);
            FullHttpResponse response = new DefaultFullHttpResponse(
                    HttpVersion.HTTP_1_1,
                    HttpResponseStatus.valueOf(a.status()),
                    headRequest ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(a.body()));
            HttpHeaders out = response.headers();
            out.set(HttpHeaderNames.CONTENT_TYPE, a.contentType());
            a.headers().forEach(out::set);
            out.setInt(HttpHeaderNames.CONTENT_LENGTH, a.body().length);
            if (!keepAlive) {
                out.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            } else if (h.protocolVersion().equals(HttpVersion.HTTP_1_0)) {
                out.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            }
            ChannelFuture written = ctx.writeAndFlush(response);
            reset();
            if (!keepAlive) {
                written.addListener(ChannelFutureListener.CLOSE);
                return;
            }
            written.addListener(f -> {
                if (f.isSuccess()) {
                    idle(ctx);
                    ctx.read();
                } else {
                    ctx.close();
                }
            });
        }

        /** An answer written past the codec, for a request it cannot carry on with; the connection then closes. */
        private void rawAnswer(ChannelHandlerContext ctx, int status, String message) {
            state = State.ANSWERING;
            byte[] body = ("{\"error\":" + JsonString.quote(message) + "}").getBytes(StandardCharsets.UTF_8);
            String head = "HTTP/1.1 " + HttpResponseStatus.valueOf(status) + "\r\nContent-Type: " + JSON
                    + "\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n";
            ByteBuf out = Unpooled.wrappedBuffer(head.getBytes(StandardCharsets.US_ASCII), body);
            ChannelHandlerContext first = ctx.pipeline().context(BYTES);
            (first == null ? ctx : first).writeAndFlush(out).addListener(ChannelFutureListener.CLOSE);
            reset();
        }

        private void reading(ChannelHandlerContext ctx) {
            state = State.READING;
            deadline(ctx, System.nanoTime() + readTimeout);
        }

        private void idle(ChannelHandlerContext ctx) {
            state = State.IDLE;
            long now = System.nanoTime();
            deadline(ctx, now + (draining ? Math.min(idleTimeout, DRAIN_IDLE.toNanos()) : idleTimeout));
        }

        private void reset() {
            head = null;
            CompositeByteBuf b = body;
            if (b != null) {
                b.release();
                body = null;
            }
        }

        private void deadline(ChannelHandlerContext ctx, long at) {
            deadline = at;
            ScheduledFuture<?> t = timer;
            if (t == null || at - timerAt < 0) {
                if (t != null) {
                    t.cancel(false);
                }
                timerAt = at;
                timer = ctx.executor()
                        .schedule(() -> tick(ctx), Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        }

        private void tick(ChannelHandlerContext ctx) {
            timer = null;
            if (!ctx.channel().isActive()) {
                return;
            }
            long now = System.nanoTime();
            if (now - deadline < 0) {
                deadline(ctx, deadline);
                return;
            }
            switch (state) {
                case IDLE, ANSWERING -> ctx.close();
                case READING -> rawAnswer(
                        ctx,
                        408,
                        "the request did not arrive in full within " + millis(readTimeout) + " of its first byte");
            }
        }
    }
}
