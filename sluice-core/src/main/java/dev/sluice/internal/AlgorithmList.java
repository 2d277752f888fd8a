package dev.sluice.internal;

import dev.sluice.Algorithm;
import java.util.Set;

/** Algorithms named in an error message. */
public final class AlgorithmList {

    private AlgorithmList() {}

    /** {@code algorithms} as words, in their order: {@code "FIXED_WINDOW, SLIDING_WINDOW_COUNTER and SLIDING_TAIL"}. */
    public static String of(Set<Algorithm> algorithms) {
        StringBuilder b = new StringBuilder();
        int i = 0;
        for (Algorithm a : algorithms) {
            if (i > 0) {
                b.append(i == algorithms.size() - 1 ? " and " : ", ");
            }
            b.append(a);
            i++;
        }
        return b.length() == 0 ? "no algorithm" : b.toString();
    }
}
