package dev.sluice.redis;

import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.NettyCustomizer;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts what Lettuce sends to Redis on every connection of the clients built on {@link #resources()}: a network
 * write is a flush of the socket that carries bytes (one or more commands, sent without waiting for a reply), so a
 * call that costs one round trip shows as one network write on a standalone server. A handler at the socket end of
 * each connection's Netty pipeline sees exactly the bytes and flushes that reach the socket.
 */
final class NetworkWrites implements NettyCustomizer {

    private final AtomicLong writes = new AtomicLong();
    private final ClientResources resources =
            DefaultClientResources.builder().nettyCustomizer(this).build();

    /** Client resources whose connections are counted; shut them down after the client. */
    ClientResources resources() {
        return resources;
    }

    /** Network writes so far, over all counted connections. */
    long count() {
        return writes.get();
    }

    @Override
    public void afterChannelInitialized(Channel channel) {
        channel.pipeline().addFirst(new ChannelOutboundHandlerAdapter() {
            private boolean pending; // confined to the channel's event loop

            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) throws Exception {
                if (!(msg instanceof ByteBuf) || ((ByteBuf) msg).isReadable()) {
                    pending = true;
                }
                super.write(ctx, msg, promise);
            }

            @Override
            public void flush(ChannelHandlerContext ctx) throws Exception {
                if (pending) {
                    pending = false;
                    writes.incrementAndGet();
                }
                super.flush(ctx);
            }
        });
    }
}
