package dev.sluice.policy;

import java.util.ArrayList;
import java.util.List;

/** {@code *} in a rule's value: each matches any run of characters, the empty one included. */
final class Wildcard {

    private Wildcard() {}

    /** {@code "a*b*c"} becomes {@code ["a", "b", "c"]}; {@code "a*"} becomes {@code ["a", ""]}. */
    static String[] split(String value) {
        List<String> parts = new ArrayList<>();
        int from = 0;
        for (int i = value.indexOf('*'); i >= 0; i = value.indexOf('*', from)) {
            parts.add(value.substring(from, i));
            from = i + 1;
        }
        parts.add(value.substring(from));
        return parts.toArray(new String[0]);
    }

    /**
     * Whether {@code s} starts with the first part, ends with the last, and holds the middle parts in order between
     * them, none overlapping.
     */
    static boolean matches(String[] parts, String s) {
        String first = parts[0];
        String last = parts[parts.length - 1];
        if (s.length() < first.length() + last.length() || !s.startsWith(first) || !s.endsWith(last)) {
            return false;
        }
        int at = first.length();
        int end = s.length() - last.length();
        for (int i = 1; i < parts.length - 1; i++) {
            int found = s.indexOf(parts[i], at);
            if (found < 0 || found + parts[i].length() > end) {
                return false;
            }
            at = found + parts[i].length();
        }
        return true;
    }
}
