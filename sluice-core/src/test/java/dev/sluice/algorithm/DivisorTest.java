package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link Divisor} against Java's division, and {@link ExactMath}'s division by a divisor against its long twin. */
class DivisorTest {

    /** Divisors at every bit length, at and around its powers of two, a window of a day and of ten years, random. */
    private static List<Long> divisors(Random random) {
        List<Long> d = new ArrayList<>(List.of(
                1L,
                3L,
                7L,
                10L,
                60L,
                1_000L,
                10_000_000L,
                100_000_000L,
                86_400_000_000_000L,
                315_619_200_000_000_000L));
        for (int bit = 1; bit < 63; bit++) {
            long p = 1L << bit;
            d.add(p - 1);
            d.add(p);
            d.add(p + 1);
            d.add(p + (random.nextLong() >>> (64 - bit)));
        }
        d.add(Long.MAX_VALUE - 1);
        d.add(Long.MAX_VALUE);
        return d;
    }

    /** Dividends around multiples of {@code d} and near 2^63, and random ones. */
    private static List<Long> dividends(Random random, long d) {
        List<Long> n = new ArrayList<>(List.of(0L, 1L, 2L, Long.MAX_VALUE - 1, Long.MAX_VALUE));
        for (long k : new long[] {1, 2, 3, 1_000, Long.MAX_VALUE / d, random.nextLong() >>> 1}) {
            long base = Math.multiplyHigh(k, d) == 0 && k * d >= 0 ? k * d : (Long.MAX_VALUE / d) * d;
            for (long delta = -2; delta <= 2; delta++) {
                long v = base + delta;
                if (v >= 0) {
                    n.add(v);
                }
            }
        }
        for (int i = 0; i < 40; i++) {
            n.add(random.nextLong() >>> (1 + random.nextInt(63)));
        }
        return n;
    }

    @Test
    void dividesEveryNonNegativeLongExactly() {
        Random random = new Random(3);
        for (long d : divisors(random)) {
            Divisor divisor = new Divisor(d);
            for (long n : dividends(random, d)) {
                assertEquals(n / d, divisor.divide(n), n + " / " + d);
            }
        }
    }

    @Test
    void exactMathAgreesWithTheLongDivisorOnFastAndOverflowPaths() {
        Random random = new Random(4);
        List<Long> d = divisors(random);
        for (int i = 0; i < 20_000; i++) {
            long c = d.get(random.nextInt(d.size()));
            Divisor divisor = new Divisor(c);
            long a = random.nextLong() >>> (1 + random.nextInt(63));
            long b = random.nextLong() >>> (1 + random.nextInt(63));
            long product = Math.multiplyHigh(a, b) == 0 && a * b >= 0 ? a * b : Long.MAX_VALUE;
            long sub = product == 0 ? 0 : (random.nextLong() >>> 1) % product;
            long add = random.nextLong() >>> (1 + random.nextInt(63));
            String what = a + ", " + b + ", " + c;
            // the quotients of a product that overflows a long may not fit one either: compare only those that do
            if (fits(() -> ExactMath.mulAddDiv(a, b, add, c))) {
                assertEquals(ExactMath.mulAddDiv(a, b, add, c), ExactMath.mulAddDiv(a, b, add, divisor), what);
            }
            if (fits(() -> ExactMath.mulDiv(a, b, c))) {
                assertEquals(ExactMath.mulDiv(a, b, c), ExactMath.mulDiv(a, b, divisor), what);
            }
            if (product != Long.MAX_VALUE || fits(() -> ExactMath.mulSubDiv(a, b, sub, c))) {
                assertEquals(ExactMath.mulSubDiv(a, b, sub, c), ExactMath.mulSubDiv(a, b, sub, divisor), what);
                assertEquals(ExactMath.mulSubDivCeil(a, b, sub, c), ExactMath.mulSubDivCeil(a, b, sub, divisor), what);
            }
        }
    }

    @Test
    void refusesADivisorBelowOne() {
        assertEquals(
                "divisor must be > 0, was 0",
                assertThrows(IllegalArgumentException.class, () -> new Divisor(0))
                        .getMessage());
    }

    private static boolean fits(java.util.function.LongSupplier quotient) {
        try {
            quotient.getAsLong();
            return true;
        } catch (ArithmeticException e) {
            return false;
        }
    }
}
