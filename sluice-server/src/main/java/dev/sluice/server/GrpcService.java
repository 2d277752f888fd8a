package dev.sluice.server;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;

/** Envoy's {@code envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit} over the {@link RateLimitAdapter}. */
final class GrpcService extends RateLimitServiceGrpc.RateLimitServiceImplBase {
    private static final System.Logger LOG = System.getLogger(GrpcService.class.getName());

    private final RateLimitAdapter adapter;
    private final ServerMetrics metrics;

    GrpcService(RateLimitAdapter adapter, ServerMetrics metrics) {
        this.adapter = adapter;
        this.metrics = metrics;
    }

    @Override
    public void shouldRateLimit(RateLimitRequest request, StreamObserver<RateLimitResponse> answer) {
        long start = System.nanoTime();
        try {
            decide(request, answer);
        } finally {
            metrics.answered("grpc", start);
        }
    }

    private void decide(RateLimitRequest request, StreamObserver<RateLimitResponse> answer) {
        RateLimitResponse response;
        try {
            response = adapter.shouldRateLimit(request);
        } catch (InvalidRequestException e) {
            metrics.request("grpc", "invalid");
            answer.onError(
                    Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        } catch (IllegalStateException e) { // the limiter is closed: shutting down
            metrics.request("grpc", "unavailable");
            answer.onError(Status.UNAVAILABLE
                    .withDescription("the rate limit service is shutting down")
                    .asRuntimeException());
            return;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "ShouldRateLimit failed on " + request, e);
            metrics.request("grpc", "unavailable");
            answer.onError(Status.UNAVAILABLE.withDescription(e.toString()).asRuntimeException());
            return;
        }
        metrics.request("grpc", response.getOverallCode() == RateLimitResponse.Code.OVER_LIMIT ? "over_limit" : "ok");
        answer.onNext(response);
        answer.onCompleted();
    }
}
