package dev.sluice.server;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCallHandler;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/**
 * Envoy's {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit} over the {@link RateLimitAdapter}.
 *
 * <p>The transport hands each call over on its own event loop (the server runs with a direct executor). A message of at
 * most {@link RateLimitAdapter#INLINE_BYTES} bytes, as Envoy's requests are, is decided there: answered at once when
 * the check needs no store call (in memory, synchronized mode, a covering leased slice, the over-limit cache), and
 * otherwise on the thread that completes the store call ({@link dev.sluice.policy.PolicyLimiter#checkAsync}), so no
 * thread waits for the store and as many checks are in flight as callers send (at most {@code --grpc-max-calls} open
 * calls). A larger message is decoded and decided on a {@linkplain #work bounded pool}, so that decoding it does not
 * hold up the other connections of its loop: a call that finds every thread busy and the queue full is answered {@code
 * RESOURCE_EXHAUSTED} at once. The message is taken as bytes and decoded by the adapter, so that one that is not a
 * {@code RateLimitRequest} (or carries a string that is not UTF-8) is {@code INVALID_ARGUMENT}, counted and logged at
 * most once a while, instead of gRPC's {@code UNKNOWN} with a stack trace per message.
 */
final class GrpcService {
    private static final System.Logger LOG = System.getLogger(GrpcService.class.getName());

    /** The request as it came: decoded by {@link RateLimitAdapter#fromProto}, never by gRPC. */
    static final MethodDescriptor.Marshaller<byte[]> BYTES = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                if (stream instanceof KnownLength) { // gRPC's own: read at once, not through an 8 KiB buffer
                    byte[] message = new byte[stream.available()];
                    if (stream.readNBytes(message, 0, message.length) == message.length && stream.read() == -1) {
                        return message;
                    }
                    throw new IOException("the message's length is not what its stream said");
                }
                return stream.readAllBytes(); // at most the server's maxInboundMessageSize
            } catch (IOException e) {
                throw Status.INTERNAL
                        .withDescription("cannot read the message: " + e)
                        .asRuntimeException();
            }
        }
    };

    static final MethodDescriptor<byte[], RateLimitResponse> SHOULD_RATE_LIMIT =
            RateLimitServiceGrpc.getShouldRateLimitMethod().toBuilder(
                            BYTES, ProtoUtils.marshaller(RateLimitResponse.getDefaultInstance()))
                    .build();

    private final RateLimitAdapter adapter;
    private final ServerMetrics metrics;
    private final ThreadPoolExecutor work;

    /**
     * @param work where calls with a large message are decided: a fixed number of threads and a bounded queue that
     *             rejects beyond it ({@link ThreadPoolExecutor.AbortPolicy})
     */
    GrpcService(RateLimitAdapter adapter, ServerMetrics metrics, ThreadPoolExecutor work) {
        this.adapter = adapter;
        this.metrics = metrics;
        this.work = work;
    }

    ServerServiceDefinition definition() {
        return ServerServiceDefinition.builder(RateLimitServiceGrpc.SERVICE_NAME)
                .addMethod(SHOULD_RATE_LIMIT, unary(work, metrics, message -> message.length, this::decide))
                .build();
    }

    /**
     * A unary method run on the transport's thread when its message is at most {@link RateLimitAdapter#INLINE_BYTES}
     * bytes ({@code size}), else handed over to {@code work}: {@code RESOURCE_EXHAUSTED} if the pool takes no more, and
     * nothing done for a call its client cancelled while it waited.
     */
    static <Q, R> ServerCallHandler<Q, R> unary(
            ThreadPoolExecutor work, @Nullable ServerMetrics metrics, ToIntFunction<Q> size, Method<Q, R> method) {
        return ServerCalls.asyncUnaryCall((request, answer) -> {
            long arrived = System.nanoTime();
            ServerCallStreamObserver<R> call = (ServerCallStreamObserver<R>) answer;
            call.setOnCancelHandler(() -> {}); // a cancelled call is dropped below, not answered
            if (size.applyAsInt(request) <= RateLimitAdapter.INLINE_BYTES) {
                method.invoke(request, call, arrived);
                return;
            }
            try {
                work.execute(() -> {
                    if (!call.isCancelled()) {
                        method.invoke(request, call, arrived);
                    }
                });
            } catch (RejectedExecutionException e) {
                if (metrics != null) {
                    metrics.request("grpc", "exhausted");
                    metrics.answered("grpc", arrived);
                }
                call.onError(Status.RESOURCE_EXHAUSTED
                        .withDescription("the service is deciding " + work.getMaximumPoolSize()
                                + " large requests and has " + work.getQueue().size()
                                + " waiting, its limit (serve --grpc-max-queue): retry later")
                        .asRuntimeException());
            }
        });
    }

    /** A unary method that also learns when its call arrived, before it waited for a thread. */
    interface Method<Q, R> {
        void invoke(Q request, StreamObserver<R> answer, long arrivedNanos);
    }

    private void decide(byte[] message, StreamObserver<RateLimitResponse> answer, long arrivedNanos) {
        CompletionStage<RateLimitResponse> response;
        try {
            response = adapter.shouldRateLimitAsync(RateLimitAdapter.fromProto(message));
        } catch (RuntimeException e) {
            answer(null, e, answer, arrivedNanos);
            return;
        }
        // answered here when decided here; else on the thread that completes the store call, this one being free
        var unused = response.whenComplete((r, e) -> answer(r, e, answer, arrivedNanos));
    }

    private void answer(
            @Nullable RateLimitResponse response,
            @Nullable Throwable failure,
            StreamObserver<RateLimitResponse> answer,
            long arrivedNanos) {
        try {
            Throwable e = RateLimitAdapter.cause(failure);
            if (e instanceof InvalidRequestException invalid) {
                adapter.refused("grpc", invalid);
                answer.onError(Status.INVALID_ARGUMENT
                        .withDescription(invalid.getMessage())
                        .asRuntimeException());
            } else if (e instanceof IllegalStateException) { // the limiter is closed: shutting down
                metrics.request("grpc", "unavailable");
                answer.onError(Status.UNAVAILABLE
                        .withDescription("the rate limit service is shutting down")
                        .asRuntimeException());
            } else if (e != null || response == null) {
                LOG.log(System.Logger.Level.ERROR, "ShouldRateLimit failed", e);
                metrics.request("grpc", "unavailable");
                answer.onError(
                        Status.UNAVAILABLE.withDescription(String.valueOf(e)).asRuntimeException());
            } else {
                metrics.request(
                        "grpc", response.getOverallCode() == RateLimitResponse.Code.OVER_LIMIT ? "over_limit" : "ok");
                answer.onNext(response);
                answer.onCompleted();
            }
        } finally {
            metrics.answered("grpc", arrivedNanos);
        }
    }
}
