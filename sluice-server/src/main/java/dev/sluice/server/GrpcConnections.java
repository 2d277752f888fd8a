package dev.sluice.server;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.Channel;
import io.grpc.netty.shaded.io.netty.channel.ChannelFactory;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandler;
import io.grpc.netty.shaded.io.netty.channel.ChannelHandlerContext;
import io.grpc.netty.shaded.io.netty.channel.ChannelInboundHandlerAdapter;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.ServerChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.Epoll;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.nio.NioEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.socket.nio.NioServerSocketChannel;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A bound on the gRPC server's open connections: a connection accepted past it is closed at once, before a byte is
 * read or written, and logged at most once every 10 s with how many were closed since.
 *
 * <p>Why it is needed beside the bound on calls ({@link OpenCalls}): a stream answered before its client has finished
 * sending stays half-closed in grpc-java's transport until the client ends it, and counts against its connection's
 * streams ({@code --grpc-max-streams}). A real client ends it at once; a hostile one keeps up to that many per
 * connection, about 1.3 KB each. So what the transport can be made to hold is this bound times that: the default
 * allows 2 KiB a stream in half the maximum heap, 640 connections of 100 streams at {@code -Xmx256m}.
 *
 * <p>It owns the server's event loops, since grpc-java takes a channel type only with the loops to run it: epoll
 * where Netty's native transport loads (as grpc-java's own default), NIO elsewhere. Thread-safe.
 */
// Netty's shutdown and close futures carry no result to act on: a connection closed is all that could be done.
@SuppressWarnings("FutureReturnValueIgnored")
final class GrpcConnections implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(GrpcConnections.class.getName());

    /** Bytes of heap one stream held by a hostile client may cost, rounded up: what the default bound allows for. */
    static final long BYTES_PER_STREAM = 2048;

    private final int max;
    private final boolean epoll = Epoll.isAvailable();
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Bound bound = new Bound();

    /** @param max connections open at once, at least 1 */
    GrpcConnections(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be >= 1, was " + max);
        }
        this.max = max;
        DefaultThreadFactory acceptor = new DefaultThreadFactory("sluice-grpc-accept", true);
        DefaultThreadFactory transport = new DefaultThreadFactory("sluice-grpc-transport", true);
        // One loop per processor, not Netty's default of two: a loop never blocks (checks that wait for the store
        // are answered from the store's thread), so a second loop per processor only adds switches between them
        // (docs/benchmarks.md, "gRPC decided on the event loop").
        int loops = Runtime.getRuntime().availableProcessors();
        this.boss = epoll ? new EpollEventLoopGroup(1, acceptor) : new NioEventLoopGroup(1, acceptor);
        this.workers = epoll ? new EpollEventLoopGroup(loops, transport) : new NioEventLoopGroup(loops, transport);
    }

    /** The default bound for {@code maxStreams} streams a connection: half the maximum heap's worth of streams. */
    static int defaultMax(int maxStreams) {
        long bytes = Runtime.getRuntime().maxMemory() / 2;
        return (int) Math.min(Integer.MAX_VALUE, Math.max(16, bytes / (maxStreams * BYTES_PER_STREAM)));
    }

    /** Has {@code builder} accept its connections through this bound, on this object's loops. */
    NettyServerBuilder configure(NettyServerBuilder builder) {
        ChannelFactory<ServerChannel> channels = () -> {
            ServerChannel channel = epoll ? new EpollServerSocketChannel() : new NioServerSocketChannel();
            channel.pipeline().addFirst(bound); // before the acceptor that hands each connection to gRPC
            return channel;
        };
        return builder.channelFactory(channels).bossEventLoopGroup(boss).workerEventLoopGroup(workers);
    }

    /** The connections open now. */
    int open() {
        return bound.open.get();
    }

    /** Stops the loops; after the gRPC server has terminated. */
    @Override
    public void close() {
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2000);
    }

    /** Counts each accepted connection until it closes; closes one past the bound before gRPC sees it. */
    @ChannelHandler.Sharable
    private final class Bound extends ChannelInboundHandlerAdapter {
        /** Connections accepted and not yet closed. */
        final AtomicInteger open = new AtomicInteger();
        /** When a refusal was last logged; {@code Long.MIN_VALUE}: never. */
        final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE);
        /** Refusals since the last one logged. */
        final AtomicLong unlogged = new AtomicLong();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            Channel connection = (Channel) msg;
            if (open.incrementAndGet() > max) {
                open.decrementAndGet();
                connection.unsafe().closeForcibly();
                refused(connection);
                return;
            }
            connection.closeFuture().addListener(f -> open.decrementAndGet());
            ctx.fireChannelRead(msg);
        }

        private void refused(Channel connection) {
            long now = System.nanoTime();
            long last = lastLogged.get();
            if ((last != Long.MIN_VALUE && now - last < BadRequestLog.INTERVAL_NANOS)
                    || !lastLogged.compareAndSet(last, now)) {
                unlogged.incrementAndGet();
                return;
            }
            long skipped = unlogged.getAndSet(0);
            LOG.log(
                    System.Logger.Level.WARNING,
                    "closed a gRPC connection from " + connection.remoteAddress() + " at once: " + max
                            + " are open, the limit (serve --grpc-max-connections)"
                            + (skipped > 0 ? " (and " + skipped + " more since the last such line)" : "")
                            + "; logged at most once every " + BadRequestLog.INTERVAL_NANOS / 1_000_000_000L + " s");
        }
    }
}
