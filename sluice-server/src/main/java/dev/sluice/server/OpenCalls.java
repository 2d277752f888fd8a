package dev.sluice.server;

import io.grpc.ForwardingServerCallListener.SimpleForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * A bound on the gRPC calls open at once over every connection, from a call's headers to its end: a call past it is
 * closed {@code RESOURCE_EXHAUSTED} at once, before its message is read.
 *
 * <p>The per-connection bound on streams ({@code --grpc-max-streams}) and the bounded queue of the pool that decides
 * large messages ({@code --grpc-max-queue}) leave two things unbounded: checks waiting for the store, and streams whose
 * message has not arrived, held open on as many connections as a client cares to open. Each holds the transport's state
 * for its stream, so 200 connections of 1000 such streams hold 200,000 of them. This bound counts every open call,
 * whatever it waits for, so what the transport holds for calls is at most this many calls' worth. Thread-safe: the
 * transport's threads call it concurrently.
 */
final class OpenCalls implements ServerInterceptor {
    private final int max;
    private final @Nullable ServerMetrics metrics;

    /** The calls open now: taken when a call starts, given back once when it completes or is cancelled. */
    private final AtomicInteger open = new AtomicInteger();

    /**
     * @param max     calls open at once, at least 1
     * @param metrics where a refused call is counted ({@code result="exhausted"}); null: not counted
     */
    OpenCalls(int max, @Nullable ServerMetrics metrics) {
        if (max < 1) {
            throw new IllegalArgumentException("max must be >= 1, was " + max);
        }
        this.max = max;
        this.metrics = metrics;
    }

    /** The calls open now. */
    int open() {
        return open.get();
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(
            ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        if (open.incrementAndGet() > max) {
            open.decrementAndGet();
            long arrived = System.nanoTime();
            if (metrics != null) {
                metrics.request("grpc", "exhausted");
                metrics.answered("grpc", arrived);
            }
            call.close(
                    Status.RESOURCE_EXHAUSTED.withDescription("the service is at its limit of open calls, " + max
                            + " (serve --grpc-max-calls): retry later"),
                    new Metadata());
            return new ServerCall.Listener<>() {};
        }
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                open.decrementAndGet();
            }
        };
        ServerCall.Listener<Q> listener;
        try {
            listener = next.startCall(call, headers);
        } catch (RuntimeException | Error e) {
            release.run();
            throw e;
        }
        return new SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onComplete() {
                release.run();
                super.onComplete();
            }

            @Override
            public void onCancel() {
                release.run();
                super.onCancel();
            }
        };
    }
}
