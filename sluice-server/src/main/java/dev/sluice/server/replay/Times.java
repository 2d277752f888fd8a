package dev.sluice.server.replay;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * A log's times: epoch milliseconds (digits) or ISO-8601 with a zone. {@code 2026-11-27T14:00:00.25Z} and
 * {@code 2026-11-27 15:00:00+01:00} are read by hand; any other ISO-8601 form that {@link OffsetDateTime#parse} takes is
 * read by it. A time without a zone is refused: it would mean a different instant on every machine.
 */
final class Times {
    /** The latest time a limiter's clock reads, in epoch milliseconds: its nanoseconds fill a {@code long}. */
    static final long LATEST = Long.MAX_VALUE / 1_000_000;
    /** The earliest, likewise. */
    static final long EARLIEST = Long.MIN_VALUE / 1_000_000;

    private Times() {}

    /**
     * {@code millis}, a log's time read from {@code b[from, to)}, if a limiter's clock can read it ({@link #EARLIEST}
     * to {@link #LATEST}: 1677 to 2262).
     *
     * @throws LogReader.LineException naming the time when it is outside that range
     */
    static long inRange(long millis, byte[] b, int from, int to) throws LogReader.LineException {
        if (millis > LATEST || millis < EARLIEST) {
            throw new LogReader.LineException(
                    BadLine.Problem.MISSING_TIME,
                    "time " + shown(text(b, from, to)) + " is outside "
                            + Instant.ofEpochMilli(EARLIEST) + " to " + Instant.ofEpochMilli(LATEST)
                            + ", the times a limiter's clock reads");
        }
        return millis;
    }

    /**
     * The time in {@code b[from, to)}, unquoted.
     *
     * @throws LogReader.LineException naming the value when it is not a time
     */
    static long parse(byte[] b, int from, int to) throws LogReader.LineException {
        if (from == to) {
            throw new LogReader.LineException(BadLine.Problem.MISSING_TIME, "the time is empty");
        }
        long digits = digits(b, from, to);
        if (digits >= 0) {
            return inRange(digits, b, from, to);
        }
        long iso = iso(b, from, to);
        if (iso != Long.MIN_VALUE) {
            return inRange(iso, b, from, to);
        }
        String text = text(b, from, to);
        try {
            return inRange(OffsetDateTime.parse(text).toInstant().toEpochMilli(), b, from, to);
        } catch (DateTimeParseException | ArithmeticException e) {
            throw new LogReader.LineException(
                    BadLine.Problem.MISSING_TIME,
                    "time '" + shown(text)
                            + "' is neither epoch milliseconds nor ISO-8601 with a zone (2026-11-27T14:00:00.250Z)");
        }
    }

    private static String text(byte[] b, int from, int to) {
        return new String(b, from, to - from, StandardCharsets.UTF_8);
    }

    /** A time as an error shows it: its first 60 characters at most. */
    private static String shown(String text) {
        return text.length() > 60 ? text.substring(0, 60) + "…" : text;
    }

    /** The whole number of {@code b[from, to)}, or -1 if it is not only digits (or too long). */
    static long digits(byte[] b, int from, int to) {
        if (to - from > 18) {
            return -1;
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            int d = b[i] - '0';
            if (d < 0 || d > 9) {
                return -1;
            }
            v = v * 10 + d;
        }
        return v;
    }

    /** {@code yyyy-MM-dd[T ]HH:mm:ss[.fraction](Z|±HH:mm|±HHmm)} in epoch ms; {@link Long#MIN_VALUE} if not that. */
    private static long iso(byte[] b, int from, int to) {
        int n = to - from;
        if (n < 20
                || b[from + 4] != '-'
                || b[from + 7] != '-'
                || (b[from + 10] != 'T' && b[from + 10] != ' ')
                || b[from + 13] != ':'
                || b[from + 16] != ':') {
            return Long.MIN_VALUE;
        }
        int year = num(b, from, 4);
        int month = num(b, from + 5, 2);
        int day = num(b, from + 8, 2);
        int hour = num(b, from + 11, 2);
        int minute = num(b, from + 14, 2);
        int second = num(b, from + 17, 2);
        if (year < 0
                || month < 1
                || month > 12
                || day < 1
                || day > 31
                || hour < 0
                || hour > 23
                || minute < 0
                || minute > 59
                || second < 0
                || second > 59) {
            return Long.MIN_VALUE;
        }
        int i = from + 19;
        long millis = 0;
        if (i < to && b[i] == '.') {
            i++;
            int digits = 0;
            while (i < to && b[i] >= '0' && b[i] <= '9') {
                if (digits < 3) {
                    millis = millis * 10 + (b[i] - '0');
                }
                digits++;
                i++;
            }
            if (digits == 0) {
                return Long.MIN_VALUE;
            }
            for (int d = digits; d < 3; d++) {
                millis *= 10;
            }
        }
        long offsetSeconds;
        if (i == to - 1 && (b[i] == 'Z' || b[i] == 'z')) {
            offsetSeconds = 0;
        } else if (i < to && (b[i] == '+' || b[i] == '-')) {
            int sign = b[i] == '-' ? -1 : 1;
            int oh = num(b, i + 1, 2);
            int om;
            if (to - i == 6 && b[i + 3] == ':') {
                om = num(b, i + 4, 2);
            } else if (to - i == 5) {
                om = num(b, i + 3, 2);
            } else {
                return Long.MIN_VALUE;
            }
            if (oh < 0 || oh > 18 || om < 0 || om > 59) {
                return Long.MIN_VALUE;
            }
            offsetSeconds = sign * (oh * 3600L + om * 60L);
        } else {
            return Long.MIN_VALUE;
        }
        if (day > daysInMonth(year, month)) {
            return Long.MIN_VALUE;
        }
        long days = epochDay(year, month, day);
        return ((days * 86_400 + hour * 3600L + minute * 60L + second) - offsetSeconds) * 1000 + millis;
    }

    private static int num(byte[] b, int at, int count) {
        int v = 0;
        for (int i = at; i < at + count; i++) {
            int d = b[i] - '0';
            if (d < 0 || d > 9) {
                return -1;
            }
            v = v * 10 + d;
        }
        return v;
    }

    private static int daysInMonth(int year, int month) {
        return switch (month) {
            case 2 -> (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
            case 4, 6, 9, 11 -> 30;
            default -> 31;
        };
    }

    /** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
    static long epochDay(int year, int month, int day) {
        long y = month <= 2 ? year - 1 : year;
        long era = Math.floorDiv(y, 400);
        long yoe = y - era * 400;
        long doy = (153L * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
        long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146_097 + doe - 719_468;
    }
}
