package dev.sluice.mongodb;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Names the requests one store appends to key documents: a random 64-bit start, then counting up, so that two
 * requests in one document's history (a few dozen at most) never share a name: within one store they differ by
 * construction, across stores only if two random starts fall within a few billion of each other. Thread-safe.
 */
final class OpIds {

    private final AtomicLong next;

    private OpIds(long start) {
        this.next = new AtomicLong(start);
    }

    static OpIds random() {
        return new OpIds(new SecureRandom().nextLong());
    }

    long next() {
        return next.getAndIncrement();
    }

    /** The field name under which the server's time of request {@code id} is kept. */
    static String field(long id) {
        return Long.toHexString(id);
    }
}
