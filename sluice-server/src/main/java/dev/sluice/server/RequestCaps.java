package dev.sluice.server;

/**
 * The caps on one decision request, the same over gRPC and {@code POST /json}: a request over any of them is refused
 * ({@code INVALID_ARGUMENT}, 400) with a message naming the cap, the size given and the {@code serve} option that sets
 * it. They bound what one request can cost: the work of its check, the keys it can add to a store, and the length of
 * anything it can put in a log line or a metric.
 *
 * @param maxDescriptors descriptors in one request ({@code --max-descriptors})
 * @param maxEntries     entries in one descriptor ({@code --max-entries})
 * @param maxKeyBytes    the UTF-8 length of the domain and of each entry's key ({@code --max-key-bytes})
 * @param maxValueBytes  the UTF-8 length of each entry's value ({@code --max-value-bytes})
 */
record RequestCaps(int maxDescriptors, int maxEntries, int maxKeyBytes, int maxValueBytes) {
    /**
     * The defaults: Envoy's rate limit actions make a handful of descriptors of a few entries each, with short keys;
     * values (an address, a client id, a header) fit in a kilobyte.
     */
    static final RequestCaps DEFAULTS = new RequestCaps(64, 16, 256, 1024);

    RequestCaps {
        positive("maxDescriptors", maxDescriptors);
        positive("maxEntries", maxEntries);
        positive("maxKeyBytes", maxKeyBytes);
        positive("maxValueBytes", maxValueBytes);
    }

    private static void positive(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + " must be at least 1, was " + value);
        }
    }

    /**
     * The UTF-8 length of {@code s}, or −1 − the index of its first unpaired surrogate (a string no UTF-8 can carry:
     * a JSON escape such as {@code "\ud800"} can make one).
     */
    static long utf8Length(String s) {
        long bytes = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                bytes++;
            } else if (c < 0x800) {
                bytes += 2;
            } else if (Character.isHighSurrogate(c)) {
                if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return -1L - i;
                }
                bytes += 4;
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return -1L - i;
            } else {
                bytes += 3;
            }
        }
        return bytes;
    }

    /**
     * Checks one string of the request against its cap.
     *
     * @param field  where it is, as the message names it ({@code domain})
     * @param option the {@code serve} option of the cap
     * @throws InvalidRequestException if it is over the cap or is not valid Unicode
     */
    static void checkString(String field, String s, int cap, String option) {
        long n = utf8Length(s);
        if (n < 0 || n > cap) {
            throw refused(field, n, cap, option);
        }
    }

    /**
     * Checks the key or value of entry {@code entry} of descriptor {@code descriptor} against its cap; its place is
     * spelled out ({@code descriptors[0].entries[1].key}) only for a refusal, not for every entry of every request.
     *
     * @param part   {@code key} or {@code value}
     * @param option the {@code serve} option of the cap
     * @throws InvalidRequestException if it is over the cap or is not valid Unicode
     */
    static void checkEntry(int descriptor, int entry, String part, String s, int cap, String option) {
        long n = utf8Length(s);
        if (n < 0 || n > cap) {
            throw refused("descriptors[" + descriptor + "].entries[" + entry + "]." + part, n, cap, option);
        }
    }

    /** The refusal of a string {@link #utf8Length} measured as {@code n}: not Unicode when negative, else too long. */
    private static InvalidRequestException refused(String field, long n, int cap, String option) {
        if (n < 0) {
            return new InvalidRequestException(
                    InvalidRequestException.Kind.INVALID_UTF8,
                    field + " is not valid Unicode: an unpaired surrogate at character " + (-1 - n));
        }
        return new InvalidRequestException(
                InvalidRequestException.Kind.OVER_CAP,
                field + " is " + n + " bytes, over the limit of " + cap + " bytes (serve " + option + ")");
    }
}
