package dev.sluice.server;

import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import org.jspecify.annotations.Nullable;

/**
 * Keeps grpc-java's transport from logging a stack trace per bad stream or connection. Its Netty handler logs every
 * stream error (a stream past {@code --grpc-max-streams}, a malformed frame on one stream) at {@code WARNING}, its
 * streams every message whose gRPC framing is broken (reserved flag bits set, a length the stream's end cuts short, a
 * compressed message without an encoding) at {@code WARNING}, and its transport every connection that fails (a client
 * breaking the protocol) at {@code INFO}, each with the whole trace: a
 * client that opens streams past the limit as fast as it can would make the log grow by megabytes a second. Those
 * records are dropped and summed up instead, one line per kind at most every {@link BadRequestLog#INTERVAL_NANOS},
 * with the cause's message and how many went unlogged. Every other record is left as it is.
 */
final class TransportLog {
    /** grpc-java's Netty server handler, as it is named inside grpc-netty-shaded, and what it logs per stream. */
    static final String HANDLER = "io.grpc.netty.shaded.io.grpc.netty.NettyServerHandler";

    /** grpc-java's Netty server stream, and what it logs per message it cannot deframe. */
    static final String STREAM = "io.grpc.netty.shaded.io.grpc.netty.NettyServerStream";

    /** grpc-java's logger of failed connections, and what it logs per connection. */
    static final String CONNECTIONS = "io.grpc.netty.shaded.io.grpc.netty.NettyServerTransport.connections";

    private static final System.Logger LOG = System.getLogger(TransportLog.class.getName());

    /** Held, so that the loggers keep their filters: java.util.logging holds its loggers weakly. */
    private static final Logger HANDLER_LOGGER = Logger.getLogger(HANDLER);

    private static final Logger STREAM_LOGGER = Logger.getLogger(STREAM);

    private static final Logger CONNECTIONS_LOGGER = Logger.getLogger(CONNECTIONS);

    private static final Summary STREAMS = new Summary("refused a gRPC stream");
    private static final Summary MESSAGES = new Summary("refused a gRPC message whose framing is broken");
    private static final Summary TRANSPORTS = new Summary("closed a gRPC connection");

    private TransportLog() {}

    /** Installs the filters on grpc-java's loggers. Idempotent. */
    static void install() {
        HANDLER_LOGGER.setFilter(r -> !"Stream Error".equals(r.getMessage()) || STREAMS.drop(r.getThrown()));
        STREAM_LOGGER.setFilter(
                r -> !"Exception processing message".equals(r.getMessage()) || MESSAGES.drop(r.getThrown()));
        CONNECTIONS_LOGGER.setFilter(r -> !"Transport failed".equals(r.getMessage()) || TRANSPORTS.drop(r.getThrown()));
    }

    /** One kind of record, logged as one line at most every interval. */
    private static final class Summary {
        private final String what;
        private final AtomicLong lastLogged = new AtomicLong(Long.MIN_VALUE);
        private final AtomicLong unlogged = new AtomicLong();

        Summary(String what) {
            this.what = what;
        }

        /** Logs a line for a record of this kind unless one was logged lately; false: drop the record itself. */
        boolean drop(@Nullable Throwable cause) {
            long now = System.nanoTime();
            long last = lastLogged.get();
            if ((last != Long.MIN_VALUE && now - last < BadRequestLog.INTERVAL_NANOS)
                    || !lastLogged.compareAndSet(last, now)) {
                unlogged.incrementAndGet();
                return false;
            }
            long skipped = unlogged.getAndSet(0);
            LOG.log(
                    System.Logger.Level.WARNING,
                    what + ": " + (cause == null ? "no cause given" : cause.toString())
                            + (skipped > 0 ? " (and " + skipped + " more since the last such line)" : "")
                            + "; logged at most once every " + BadRequestLog.INTERVAL_NANOS / 1_000_000_000L + " s");
            return false;
        }
    }
}
