package dev.sluice.spi;

import java.util.Objects;

/**
 * The identity of one record in a {@link CounterStore}: a limiter's key within a shape.
 *
 * <p>The {@code shape} names the shape of the counters ({@link SharedStoreOptions#shape}, such as
 * {@code fw:60000000000}), so limiters with different algorithms or windows on the same key never read each other's
 * counts, while limiters with the same shape on every instance share them. The {@code key} is the limiter's key
 * exactly as the application passed it ({@code "client:abc"}); core never parses it.
 *
 * <p>How a key maps to a store's own identity is the counter store's choice: a Redis key
 * {@code <namespace>:{<key>}:sync:<shape>}, a PostgreSQL row whose id is the SHA-256 of {@code (shape, key)}, a
 * MongoDB document per key in a collection per shape whose {@code _id} a key codec derives from the key, for instance
 * {@code "abc:jane"} to {@code {clientId: "abc", username: "jane"}}. A store never has to turn its identity back
 * into a key: {@link CounterStore#load} answers in the order it was asked.
 *
 * @param shape the shape of the counters, not empty
 * @param key   the limiter's key, not empty
 */
public record CounterKey(String shape, String key) {

    /** Validates both parts. */
    public CounterKey {
        Objects.requireNonNull(shape, "shape must not be null");
        Objects.requireNonNull(key, "key must not be null");
        if (shape.isEmpty()) {
            throw new IllegalArgumentException("shape must not be empty");
        }
        if (key.isEmpty()) {
            throw new IllegalArgumentException("key must not be empty");
        }
    }
}
