package dev.sluice.server.replay;

import java.util.Locale;

/**
 * A line of a log that {@link LogReader} could not turn into a request, and why.
 *
 * @param line    its line number, counting from 1
 * @param problem what kind of problem
 * @param message what is wrong, naming the bad value
 * @param text    the line itself, cut to {@value #MAX_TEXT} characters
 */
public record BadLine(long line, Problem problem, String message, String text) {

    /** The most of a line's text kept. */
    public static final int MAX_TEXT = 300;

    /** The kinds of problem, as the summary counts them. */
    public enum Problem {
        /** Not a request in the log's format: broken JSON, a missing field, a bad value. */
        MALFORMED,
        /** No {@code time}, or one that is neither epoch milliseconds nor ISO-8601. */
        MISSING_TIME,
        /** A domain the configuration does not define. */
        UNKNOWN_DOMAIN,
        /** Earlier than a request already given out, by more than the reorder window. */
        OUT_OF_ORDER;

        /** Lowercase words: {@code out of order}. */
        public String words() {
            return name().toLowerCase(Locale.ROOT).replace('_', ' ');
        }
    }

    /** {@code line 12: malformed: message: text}. */
    @Override
    public String toString() {
        return "line " + line + ": " + problem.words() + ": " + message + (text.isEmpty() ? "" : ": " + text);
    }
}
