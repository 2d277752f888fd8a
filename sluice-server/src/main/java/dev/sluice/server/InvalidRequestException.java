package dev.sluice.server;

/** A request the service cannot decide: gRPC {@code INVALID_ARGUMENT}, HTTP 400. The message names the problem. */
final class InvalidRequestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    InvalidRequestException(String message) {
        super(message);
    }
}
