package dev.sluice.algorithm;

import java.math.BigInteger;

/**
 * Exact integer arithmetic for products that may exceed 64 bits (a limit times a window in nanoseconds).
 * The fast path is one {@link Math#multiplyHigh}; the rare overflow path falls back to {@link BigInteger}.
 */
final class ExactMath {

    private ExactMath() {}

    /** {@code floor((a·b + d) / c)} for {@code a, b, d ≥ 0} and {@code c > 0}; the result must fit a long. */
    static long mulAddDiv(long a, long b, long d, long c) {
        long lo = a * b;
        if (Math.multiplyHigh(a, b) == 0 && lo >= 0 && lo + d >= 0) {
            return (lo + d) / c;
        }
        return big(a).multiply(big(b)).add(big(d)).divide(big(c)).longValueExact();
    }

    /** {@code floor(a·b / c)} for {@code a, b ≥ 0} and {@code c > 0}. */
    static long mulDiv(long a, long b, long c) {
        return mulAddDiv(a, b, 0, c);
    }

    /** {@code ceil((a·b − d) / c)} for {@code a, b ≥ 0}, {@code 0 ≤ d ≤ a·b} and {@code c > 0}. */
    static long mulSubDivCeil(long a, long b, long d, long c) {
        long lo = a * b;
        if (Math.multiplyHigh(a, b) == 0 && lo >= 0) {
            long n = lo - d;
            return n / c + (n % c == 0 ? 0 : 1);
        }
        BigInteger[] qr = big(a).multiply(big(b)).subtract(big(d)).divideAndRemainder(big(c));
        return qr[0].longValueExact() + (qr[1].signum() == 0 ? 0 : 1);
    }

    /** {@link #mulAddDiv(long, long, long, long)} by a {@link Divisor}. */
    static long mulAddDiv(long a, long b, long d, Divisor c) {
        long lo = a * b;
        if (Math.multiplyHigh(a, b) == 0 && lo >= 0 && lo + d >= 0) {
            return c.divide(lo + d);
        }
        return mulAddDiv(a, b, d, c.d);
    }

    /** {@link #mulDiv(long, long, long)} by a {@link Divisor}. */
    static long mulDiv(long a, long b, Divisor c) {
        return mulAddDiv(a, b, 0, c);
    }

    /** {@link #mulSubDivCeil(long, long, long, long)} by a {@link Divisor}. */
    static long mulSubDivCeil(long a, long b, long d, Divisor c) {
        long lo = a * b;
        if (Math.multiplyHigh(a, b) == 0 && lo >= 0) {
            long n = lo - d;
            long q = c.divide(n);
            return q + (n == q * c.d ? 0 : 1);
        }
        return mulSubDivCeil(a, b, d, c.d);
    }

    /** {@link #mulSubDiv(long, long, long, long)} by a {@link Divisor}. */
    static long mulSubDiv(long a, long b, long d, Divisor c) {
        long lo = a * b;
        if (Math.multiplyHigh(a, b) == 0 && lo >= 0) {
            return c.divide(lo - d);
        }
        return mulSubDiv(a, b, d, c.d);
    }

    /** {@code floor((a·b − d) / c)} for {@code a, b ≥ 0}, {@code 0 ≤ d ≤ a·b} and {@code c > 0}. */
    static long mulSubDiv(long a, long b, long d, long c) {
        long lo = a * b;
        if (Math.multiplyHigh(a, b) == 0 && lo >= 0) {
            return (lo - d) / c;
        }
        return big(a).multiply(big(b)).subtract(big(d)).divide(big(c)).longValueExact();
    }

    /** {@code a + b}, saturating at {@link Long#MAX_VALUE}, for {@code a, b ≥ 0}. */
    static long saturatedAdd(long a, long b) {
        long r = a + b;
        return r < 0 ? Long.MAX_VALUE : r;
    }

    private static BigInteger big(long v) {
        return BigInteger.valueOf(v);
    }
}
