package dev.sluice.server;

/**
 * How the service names what it refuses in a request's fields, said once for every reader of a request: the gRPC and
 * HTTP front doors ({@link RateLimitAdapter}) and {@code replay}'s reader of JSON logs, so that a line {@code replay}
 * refuses is named as the service would name the request.
 */
public final class RequestRules {
    private RequestRules() {}

    public static String emptyDomain() {
        return "rate limit domain must not be empty";
    }

    public static String noDescriptors() {
        return "rate limit descriptor list must not be empty";
    }

    public static String zeroHits(int descriptor) {
        return "descriptors[" + descriptor + "].hits_addend is 0 (check without counting),"
                + " which this service does not support: leave it unset or give at least 1";
    }

    public static String limitOverride(int descriptor) {
        return "descriptors[" + descriptor + "].limit: limit overrides in the request are not supported; the limits are"
                + " the configuration's";
    }

    public static String noEntries(int descriptor) {
        return "descriptors[" + descriptor + "] has no entries: give at least one key and value";
    }

    public static String emptyKey(int descriptor, int entry) {
        return "descriptors[" + descriptor + "].entries[" + entry + "].key must not be empty";
    }
}
