package dev.sluice.server;

/**
 * A request the service cannot decide: gRPC {@code INVALID_ARGUMENT}, HTTP 400. The message names the problem and,
 * for a cap, the cap and the size given; it never carries the request's own bytes beyond a short excerpt.
 */
final class InvalidRequestException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** What kind of problem, for logging each kind at most once a while ({@link BadRequestLog}). */
    enum Kind {
        /**
         * Not a {@code RateLimitRequest}: undecodable protobuf, malformed proto3 JSON, or a gRPC call ended without its
         * one message or sent more ({@link ReadTimeout}).
         */
        UNDECODABLE,
        /** Bytes that are not UTF-8, or a string with an unpaired surrogate. */
        INVALID_UTF8,
        /** Over one of the {@link RequestCaps}. */
        OVER_CAP,
        /** Decodable and within the caps, but a field the service cannot take (an empty domain, a limit override…). */
        INVALID_FIELD,
        /** A gRPC call whose request did not arrive in full within the read timeout ({@link ReadTimeout}). */
        TIMED_OUT
    }

    private final Kind kind;

    InvalidRequestException(Kind kind, String message) {
        super(message, null, false, false); // a client's error: no stack trace to fill, none to print
        this.kind = kind;
    }

    Kind kind() {
        return kind;
    }
}
