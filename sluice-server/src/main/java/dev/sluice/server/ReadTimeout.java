package dev.sluice.server;

import dev.sluice.spi.Durations;
import io.grpc.ForwardingServerCall.SimpleForwardingServerCall;
import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.grpc.netty.shaded.io.netty.util.HashedWheelTimer;
import io.grpc.netty.shaded.io.netty.util.Timeout;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A bound on the time a gRPC call's request may take to arrive in full: a call whose one message and end of stream
 * have not arrived within the read timeout of its headers ({@code serve --grpc-read-timeout}) is ended
 * {@code DEADLINE_EXCEEDED}, and what it held (its slot among the {@linkplain OpenCalls open calls}, its stream) is
 * released. It also answers the two shapes of a call with one request message that grpc-java would answer
 * {@code INTERNAL}, as the client's errors they are: a call ended without its message, or with more than one, is
 * {@code INVALID_ARGUMENT}. Each is logged at most once a while ({@link BadRequestLog}), never with a stack trace.
 *
 * <p>Why it is needed beside the bound on open calls: that bound holds a call from its headers to its end, and a call
 * whose message never comes never ends while its connection answers pings. A client opening calls and sending nothing
 * more would keep every slot, and every other {@code ShouldRateLimit} caller would be answered
 * {@code RESOURCE_EXHAUSTED} for as long as it cared to; with this bound, for at most the read timeout.
 *
 * <p>How a call ends, and why it takes no lock: the transport delivers a call's events one at a time on its thread
 * (the server runs with a direct executor), while the timeout fires on the timer's. The two race only for the right to
 * end a call still waiting for its request, settled by one compare-and-set on {@code state}: the request's end
 * ({@code onHalfClose}) moves it from {@code WAITING} to {@code ARRIVED} and hands the call to its method; the timeout,
 * or a malformed call, moves it to {@code ENDED} and closes the call, after which nothing is handed on. The method is
 * only ever invoked on the request's end, so a call closed here has never reached it.
 *
 * <p>Thread-safe.
 */
final class ReadTimeout implements ServerInterceptor, AutoCloseable {
    /** The shortest read timeout: the timer's tick. */
    static final Duration MIN = Duration.ofMillis(100);

    private static final int WAITING = 0;
    private static final int ARRIVED = 1;
    private static final int ENDED = 2;

    private final Duration timeout;
    private final String described;
    private final BadRequestLog log = new BadRequestLog();
    private final HashedWheelTimer timer;

    /** @param timeout how long a call's request may take to arrive in full, at least {@link #MIN} */
    ReadTimeout(Duration timeout) {
        if (timeout.compareTo(MIN) < 0) {
            throw new IllegalArgumentException("timeout must be >= " + Durations.format(MIN) + ", was " + timeout);
        }
        this.timeout = timeout;
        this.described = Durations.format(timeout);
        // A wheel: adding and cancelling a timeout are a queue operation each, so every call can have one.
        this.timer = new HashedWheelTimer(
                new DefaultThreadFactory("sluice-grpc-read-timeout", true), MIN.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        if (!call.getMethodDescriptor().getType().clientSendsOneMessage()) {
            return next.startCall(call, headers);
        }
        Guard<Q, R> guard = new Guard<>(call);
        ServerCall.Listener<Q> listener = next.startCall(guard, headers);
        if (guard.state.get() != WAITING) {
            return listener; // closed as it started
        }
        guard.timeout = timer.newTimeout(
                t -> guard.end(
                        Status.DEADLINE_EXCEEDED.withDescription("the request did not arrive in full within "
                                + described + " of the call's headers (serve --grpc-read-timeout)"),
                        InvalidRequestException.Kind.TIMED_OUT),
                timeout.toNanos(),
                TimeUnit.NANOSECONDS);
        return new SimpleForwardingServerCallListener<>(listener) {
            /** Messages received; the transport's thread only. */
            private int messages;

            @Override
            public void onMessage(Q message) {
                if (guard.state.get() != WAITING) {
                    return;
                }
                if (++messages > 1) {
                    guard.end(
                            Status.INVALID_ARGUMENT.withDescription(
                                    "a " + call.getMethodDescriptor().getFullMethodName()
                                            + " call takes one request message, was sent more"),
                            InvalidRequestException.Kind.UNDECODABLE);
                    return;
                }
                super.onMessage(message);
            }

            @Override
            public void onHalfClose() {
                if (messages == 0) {
                    guard.end(
                            Status.INVALID_ARGUMENT.withDescription("the call ended without its request message"),
                            InvalidRequestException.Kind.UNDECODABLE);
                } else if (guard.state.compareAndSet(WAITING, ARRIVED)) {
                    guard.cancelTimeout();
                    super.onHalfClose();
                }
            }

            @Override
            public void onCancel() {
                guard.cancelTimeout();
                super.onCancel();
            }
        };
    }

    /** Stops the timer: after the server has terminated. */
    @Override
    public void close() {
        timer.stop();
    }

    /** One call's state and timeout; the call as its method sees it, so that a close there counts as its end. */
    private final class Guard<Q, R> extends SimpleForwardingServerCall<Q, R> {
        final AtomicInteger state = new AtomicInteger(WAITING);
        /** Set on the transport's thread right after the call starts, before any of its events. */
        volatile @Nullable Timeout timeout;

        Guard(ServerCall<Q, R> call) {
            super(call);
        }

        /** Closed by its method (decided, or refused before its message as {@link OpenCalls} does): nothing to end. */
        @Override
        public void close(Status status, Metadata trailers) {
            state.set(ENDED);
            cancelTimeout();
            super.close(status, trailers);
        }

        void cancelTimeout() {
            Timeout t = timeout;
            if (t != null) {
                t.cancel();
            }
        }

        /** Ends the call with {@code status} unless its request has arrived or it has ended already. */
        void end(Status status, InvalidRequestException.Kind kind) {
            if (!state.compareAndSet(WAITING, ENDED)) {
                return;
            }
            cancelTimeout();
            delegate().close(status, new Metadata());
            log.refused("grpc", new InvalidRequestException(kind, status.getCode() + ": " + status.getDescription()));
        }
    }
}
