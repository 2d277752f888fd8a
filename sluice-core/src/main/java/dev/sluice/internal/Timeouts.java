package dev.sluice.internal;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Whether a store failure was a timeout: the store did not answer in time, rather than answering with an error or
 * refusing the connection. A failure policy's answer carries it ({@link dev.sluice.Decision#timedOut()}), so that
 * a caller counting failures can tell a slow store from a broken one.
 *
 * <p>Each driver has its own types for it and core depends on none, so a timeout is told by the types in the failure's
 * chain of causes: {@link java.util.concurrent.TimeoutException} (a deadline of Sluice's own, a batch's timer), or any
 * exception whose class, or a superclass of it, is named {@code ...TimeoutException}: the JDK's
 * {@code SocketTimeoutException} and {@code SQLTimeoutException}, Lettuce's {@code RedisCommandTimeoutException}, the
 * MongoDB driver's {@code MongoTimeoutException}, {@code MongoOperationTimeoutException} and
 * {@code MongoSocketReadTimeoutException}.
 */
public final class Timeouts {

    private Timeouts() {}

    /** Whether {@code failure}, or one of its causes, says that the store did not answer in time. */
    public static boolean isTimeout(@Nullable Throwable failure) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = failure; t != null && seen.add(t); t = t.getCause()) {
            for (Class<?> c = t.getClass(); c != null && c != Throwable.class; c = c.getSuperclass()) {
                if (c.getSimpleName().endsWith("TimeoutException")) {
                    return true;
                }
            }
        }
        return false;
    }
}
