package dev.sluice.testkit;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One scenario of rate-limit fields that every front door must answer alike: the policy, the time of every decision,
 * and for each client the {@code RateLimit-Policy} and {@code RateLimit} values of its requests, in order. The
 * service's and the starter's tests run it each through their own door and assert these values.
 */
public final class FieldsScenario {

    /** The policy, domain {@code api}: a rule named by its path, and one whose limit has a name to encode. */
    public static final String POLICY =
            """
            domain: api
            descriptors:
              - key: client_id
                rate_limit: {unit: minute, requests_per_unit: 3}
              - key: client_id
                value: big
                rate_limit: {unit: minute, requests_per_unit: 2, name: 'größe "2"'}
            """;

    /** The time of every decision: a quarter of a second into a minute. */
    public static final Instant NOW = Instant.parse("2026-01-01T10:00:00.250Z");

    /** The client whose limit is named by its rule's path: three allowed, then refused. */
    public static final String COUNTED = "abc";

    /** The fields of {@link #COUNTED}'s four requests, in order. */
    public static final List<Map<String, String>> COUNTED_FIELDS = List.of(
            fields("\"client_id\";q=3;w=60", "\"client_id\";r=2;t=60"),
            fields("\"client_id\";q=3;w=60", "\"client_id\";r=1;t=60"),
            fields("\"client_id\";q=3;w=60", "\"client_id\";r=0;t=60"),
            fields("\"client_id\";q=3;w=60", "\"client_id\";r=0;t=60"));

    /** The client whose limit has a name outside printable ASCII, with quotes. */
    public static final String NAMED = "big";

    /** The fields of {@link #NAMED}'s one request: percent-encoded, quotes escaped. */
    public static final Map<String, String> NAMED_FIELDS =
            fields("\"gr%C3%B6%C3%9Fe \\\"2\\\"\";q=2;w=60", "\"gr%C3%B6%C3%9Fe \\\"2\\\"\";r=1;t=60");

    private FieldsScenario() {}

    private static Map<String, String> fields(String policy, String rateLimit) {
        return Map.of("RateLimit-Policy", policy, "RateLimit", rateLimit);
    }
}
