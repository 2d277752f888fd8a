package dev.sluice.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.SluiceException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class TimeoutsTest {

    /** A driver's own type, named as Lettuce's and the MongoDB driver's are. */
    static final class RedisCommandTimeoutException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        RedisCommandTimeoutException(String message) {
            super(message);
        }
    }

    /** A driver's subclass of its timeout type. */
    static final class MongoOperationTimeout extends MongoTimeoutException {
        private static final long serialVersionUID = 1L;

        MongoOperationTimeout() {
            super("operation");
        }
    }

    static class MongoTimeoutException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        MongoTimeoutException(String message) {
            super(message);
        }
    }

    @Test
    void aTimeoutAnywhereInTheChainOfCausesIsATimeout() {
        assertTrue(Timeouts.isTimeout(new SluiceException("batch", new TimeoutException("deadline"))));
        assertTrue(Timeouts.isTimeout(new UncheckedIOException(new SocketTimeoutException("read timed out"))));
        assertTrue(Timeouts.isTimeout(new SluiceException("MongoDB failed", new MongoOperationTimeout())));
        assertTrue(Timeouts.isTimeout(new RedisCommandTimeoutException("Command timed out after 15 ms")));
    }

    @Test
    void otherFailuresAreNot() {
        assertFalse(Timeouts.isTimeout(null));
        assertFalse(Timeouts.isTimeout(new UncheckedIOException(new ConnectException("connection refused"))));
        assertFalse(Timeouts.isTimeout(new SluiceException("the store answered an error")));
        assertFalse(Timeouts.isTimeout(new IllegalStateException("timed out, says the message only")));
    }

    @Test
    void aChainThatLoopsEnds() {
        RuntimeException a = new RuntimeException("a");
        RuntimeException b = new RuntimeException("b", a);
        a.initCause(b);
        assertFalse(Timeouts.isTimeout(a));
    }
}
