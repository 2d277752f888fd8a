package dev.sluice.server;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Locale;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * {@code --log-level} and {@code --log-format} ({@code LOG_LEVEL}, {@code LOG_FORMAT}): the level of the service's log
 * (java.util.logging, on standard error) and its form, text or one JSON object a line with envoyproxy/ratelimit's keys
 * ({@code @timestamp}, {@code level}, {@code @message}), so that a log pipeline built for it reads Sluice's as well.
 */
final class Logging {

    /** The log's form. */
    enum Format {
        TEXT,
        JSON
    }

    private Logging() {}

    /**
     * The level named as envoyproxy/ratelimit's logger names it (case aside): {@code trace}, {@code debug},
     * {@code info}, {@code warn} (or {@code warning}), {@code error}, {@code fatal}, {@code panic}.
     *
     * @throws UsageException naming the value if it names no level
     */
    static Level level(Options o) {
        String v = o.string("log-level", "info");
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "trace" -> Level.FINEST;
            case "debug" -> Level.FINE;
            case "info" -> Level.INFO;
            case "warn", "warning" -> Level.WARNING;
            case "error", "fatal", "panic" -> Level.SEVERE;
            default -> throw o.bad("log-level", v, "trace, debug, info, warn, error, fatal or panic");
        };
    }

    /** @throws UsageException naming the value if it is neither {@code text} nor {@code json} */
    static Format format(Options o) {
        String v = o.string("log-format", "text");
        return switch (v.toLowerCase(Locale.ROOT)) {
            case "text" -> Format.TEXT;
            case "json" -> Format.JSON;
            default -> throw o.bad("log-format", v, "text or json");
        };
    }

    /** Sets the root logger's level and, for {@link Format#JSON}, its console handler's form. */
    static void configure(Level level, Format format) {
        Logger root = Logger.getLogger("");
        root.setLevel(level);
        for (Handler h : root.getHandlers()) {
            if (h instanceof ConsoleHandler) {
                h.setLevel(level);
                if (format == Format.JSON) {
                    h.setFormatter(new JsonFormatter());
                }
            }
        }
    }

    /** One log record as one JSON line. */
    static final class JsonFormatter extends Formatter {
        @Override
        public String format(LogRecord r) {
            String message = formatMessage(r);
            if (r.getThrown() != null) {
                StringWriter trace = new StringWriter();
                r.getThrown().printStackTrace(new PrintWriter(trace));
                message = message + "\n" + trace;
            }
            return line(r.getInstant(), levelName(r.getLevel()), String.valueOf(r.getLoggerName()), message);
        }
    }

    /**
     * A stream that writes each line printed to it as one JSON log line on {@code target}, at {@code level}: the lines
     * {@code serve} prints (its ports, its notices) in the form of the rest of the log.
     */
    static PrintStream jsonLines(PrintStream target, String level) {
        OutputStream lines = new OutputStream() {
            private final ByteArrayOutputStream line = new ByteArrayOutputStream();

            @Override
            public synchronized void write(int b) {
                if (b == '\n') {
                    String text = line.toString(StandardCharsets.UTF_8);
                    line.reset();
                    target.print(line(Instant.now(), level, "sluice", text));
                    target.flush();
                } else {
                    line.write(b);
                }
            }
        };
        return new PrintStream(lines, true, StandardCharsets.UTF_8);
    }

    private static String levelName(Level level) {
        int v = level.intValue();
        return v >= Level.SEVERE.intValue()
                ? "error"
                : v >= Level.WARNING.intValue()
                        ? "warning"
                        : v >= Level.INFO.intValue() ? "info" : v >= Level.FINE.intValue() ? "debug" : "trace";
    }

    static String line(Instant time, String level, String logger, String message) {
        return "{\"@timestamp\":\"" + time + "\",\"level\":\"" + level + "\",\"logger\":" + JsonString.quote(logger)
                + ",\"@message\":" + JsonString.quote(message) + "}\n";
    }
}
