package dev.sluice.server;

import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.protobuf.ProtoUtils;
import java.util.concurrent.ThreadPoolExecutor;

/**
 * A benchmarking aid, served only with {@code serve --bench-bare}: the same request read by the same servers, answered
 * {@code OK} without any rate-limit work, so that a load test can tell the cost of the decision from the cost of the
 * server stack around it.
 *
 * <ul>
 *   <li>gRPC {@value #SERVICE}/ShouldRateLimit: Envoy's {@code RateLimitRequest} and {@code RateLimitResponse}, on the
 *       service's own Netty server, on its event loop or its bounded pool by the message's size; the request is
 *       parsed (by gRPC here, by the adapter for the real method), the answer is a constant {@code overall_code: OK};
 *   <li>HTTP {@code POST /bench/bare}: the body is read and parsed as a {@code RateLimitRequest} in proto3 JSON, as
 *       {@code POST /json} does, and answered with the constant {@code {"overallCode":"OK"}}.
 * </ul>
 *
 * <p>Neither validates the request, asks the policies, counts in metrics or builds a response.
 */
final class BareEndpoint {
    /** The gRPC service name of the bare method. */
    static final String SERVICE = "sluice.bench.Bare";

    /** The HTTP path of the bare endpoint. */
    static final String PATH = "/bench/bare";

    /** The bare method: Envoy's messages under another service name. */
    static final MethodDescriptor<RateLimitRequest, RateLimitResponse> METHOD =
            MethodDescriptor.<RateLimitRequest, RateLimitResponse>newBuilder()
                    .setType(MethodDescriptor.MethodType.UNARY)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "ShouldRateLimit"))
                    .setRequestMarshaller(ProtoUtils.marshaller(RateLimitRequest.getDefaultInstance()))
                    .setResponseMarshaller(ProtoUtils.marshaller(RateLimitResponse.getDefaultInstance()))
                    .build();

    static final RateLimitResponse OK = RateLimitResponse.newBuilder()
            .setOverallCode(RateLimitResponse.Code.OK)
            .build();

    /** The HTTP answer, as {@code POST /json} would print {@link #OK}. */
    static final String OK_JSON = "{\"overallCode\":\"OK\"}";

    private BareEndpoint() {}

    /**
     * The bare gRPC method, answered on the transport's thread or handed to {@code work} by its size, as the real one
     * is ({@link GrpcService#unary}).
     */
    static ServerServiceDefinition grpcService(ThreadPoolExecutor work) {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(
                        METHOD,
                        GrpcService.unary(
                                work, null, RateLimitRequest::getSerializedSize, (request, answer, arrived) -> {
                                    answer.onNext(OK);
                                    answer.onCompleted();
                                }))
                .build();
    }
}
