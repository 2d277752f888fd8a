package dev.sluice.algorithm;

import java.math.BigInteger;

/**
 * Division by one positive long, fixed for a limiter's life (its limit, its window), done as a multiplication and a
 * shift: exact for every dividend in {@code [0, 2^63)}. Immutable.
 *
 * <p>Why: a 64-bit division takes a decision's arithmetic several times as long as a multiplication, and a state
 * divides by {@code L} or {@code W} on most decisions (a token bucket's retry time, the sliding tail's weighted
 * count). The method is Granlund and Montgomery's ("Division by invariant integers using multiplication", 1994,
 * theorem 4.2) for {@code N = 63}-bit dividends: with {@code l = ⌈log2 d⌉} and
 * {@code m = ⌊2^(63+l)/d⌋ + 1}, {@code 2^(63+l) < m·d ≤ 2^(63+l) + 2^l}, so
 * {@code ⌊n/d⌋ = ⌊m·n / 2^(63+l)⌋} for {@code 0 ≤ n < 2^63}. {@code m < 2^64} fits a long read as unsigned. Example,
 * {@code d = 3}: {@code l = 2}, {@code m = ⌊2^65/3⌋ + 1 = 12297829382473034411}, and for {@code n = 100} the high
 * half of {@code m·n} is 66, shifted right by {@code l − 1}: 33.
 */
final class Divisor {

    /** The divisor, positive. */
    final long d;
    /** {@code m}, read as an unsigned long. */
    private final long magic;
    /** {@code l − 1}; −1 for {@code d = 1}, which divides by doing nothing. */
    private final int shift;

    Divisor(long d) {
        if (d <= 0) {
            throw new IllegalArgumentException("divisor must be > 0, was " + d);
        }
        int l = 64 - Long.numberOfLeadingZeros(d - 1);
        this.d = d;
        this.shift = l - 1;
        this.magic = l == 0
                ? 0
                : BigInteger.ONE
                        .shiftLeft(63 + l)
                        .divide(BigInteger.valueOf(d))
                        .add(BigInteger.ONE)
                        .longValue(); // below 2^64: the low 64 bits are all of it
    }

    /** {@code ⌊n / d⌋} for {@code n ≥ 0}. */
    long divide(long n) {
        if (shift < 0) {
            return n;
        }
        long high = Math.multiplyHigh(n, magic) + ((magic >> 63) & n); // the unsigned high half: n ≥ 0
        return high >>> shift;
    }
}
