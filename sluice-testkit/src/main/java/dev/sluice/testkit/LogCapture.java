package dev.sluice.testkit;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The lines Sluice writes through {@link System.Logger} (loggers named {@code dev.sluice...}, which the JDK's default
 * logger finder hands to {@code java.util.logging}) while it is open: for tests of what an operator would read.
 *
 * <pre>{@code
 * try (LogCapture log = LogCapture.start()) {
 *     ... // an outage
 *     assertEquals(1, log.messagesContaining("store failure").size());
 * }
 * }</pre>
 */
public final class LogCapture implements AutoCloseable {

    private final Logger logger = Logger.getLogger("dev.sluice");
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    private LogCapture() {
        logger.addHandler(handler);
    }

    /** Starts capturing. */
    public static LogCapture start() {
        return new LogCapture();
    }

    /** The messages captured so far that contain {@code text}, in order. */
    public List<String> messagesContaining(String text) {
        return records.stream()
                .map(LogRecord::getMessage)
                .filter(m -> m != null && m.contains(text))
                .toList();
    }

    /** Stops capturing. */
    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
