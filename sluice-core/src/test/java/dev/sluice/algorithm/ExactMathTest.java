package dev.sluice.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link ExactMath} against {@link BigInteger}, on both its fast path and its overflow path. */
class ExactMathTest {

    private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

    /** Values around every edge the fast path tests: 0, 1, 2^31, 2^32, 2^62, 2^63 − 1, and random ones. */
    private static List<Long> values(Random random) {
        List<Long> v = new ArrayList<>(List.of(
                0L,
                1L,
                2L,
                3L,
                7L,
                59L,
                60L,
                1_000_000_007L,
                60_000_000_000L,
                (1L << 31) - 1,
                1L << 31,
                (1L << 32) - 1,
                1L << 32,
                3_037_000_499L,
                3_037_000_500L,
                (1L << 62) - 1,
                1L << 62,
                Long.MAX_VALUE / 2,
                Long.MAX_VALUE / 3,
                Long.MAX_VALUE - 1,
                Long.MAX_VALUE));
        for (int i = 0; i < 40; i++) {
            v.add(random.nextLong() >>> (1 + random.nextInt(63)));
        }
        return v;
    }

    private static BigInteger big(long v) {
        return BigInteger.valueOf(v);
    }

    @Test
    void mulAddDivIsTheFloorOfTheExactQuotient() {
        Random random = new Random(1);
        List<Long> v = values(random);
        int checked = 0;
        for (long a : v) {
            for (long b : v) {
                long d = v.get(random.nextInt(v.size()));
                long c = Math.max(1, v.get(random.nextInt(v.size())));
                BigInteger exact = big(a).multiply(big(b)).add(big(d)).divide(big(c));
                if (exact.compareTo(MAX) > 0) {
                    continue; // the result must fit: callers guarantee it
                }
                assertEquals(exact.longValueExact(), ExactMath.mulAddDiv(a, b, d, c), a + "·" + b + "+" + d + "/" + c);
                assertEquals(
                        big(a).multiply(big(b)).divide(big(c)).longValueExact(),
                        ExactMath.mulDiv(a, b, c),
                        a + "·" + b + "/" + c);
                checked++;
            }
        }
        assertEquals(true, checked > 1_000, "checked " + checked);
    }

    @Test
    void mulSubDivAndItsCeilingAreExact() {
        Random random = new Random(2);
        List<Long> v = values(random);
        int checked = 0;
        for (long a : v) {
            for (long b : v) {
                BigInteger product = big(a).multiply(big(b));
                for (int i = 0; i < 3; i++) {
                    long d = product.compareTo(MAX) > 0
                            ? v.get(random.nextInt(v.size()))
                            : (long) (random.nextDouble() * product.longValueExact());
                    if (big(d).compareTo(product) > 0) {
                        continue;
                    }
                    long c = Math.max(1, v.get(random.nextInt(v.size())));
                    BigInteger[] qr = product.subtract(big(d)).divideAndRemainder(big(c));
                    BigInteger ceil = qr[1].signum() == 0 ? qr[0] : qr[0].add(BigInteger.ONE);
                    if (ceil.compareTo(MAX) > 0) {
                        continue;
                    }
                    String what = a + "·" + b + "−" + d + "/" + c;
                    assertEquals(qr[0].longValueExact(), ExactMath.mulSubDiv(a, b, d, c), what);
                    assertEquals(ceil.longValueExact(), ExactMath.mulSubDivCeil(a, b, d, c), what);
                    checked++;
                }
            }
        }
        assertEquals(true, checked > 2_000, "checked " + checked);
    }

    @Test
    void theOverflowPathsGiveExactAnswers() {
        // (2^63 − 1)² / (2^63 − 1) needs 126 bits on the way
        assertEquals(Long.MAX_VALUE, ExactMath.mulDiv(Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE));
        // a product that fits but whose sum with d does not
        assertEquals(Long.MAX_VALUE / 2 + 1, ExactMath.mulAddDiv(Long.MAX_VALUE, 1, 1, 2));
        // a low word that looks negative: 2^32 · 2^31 = 2^63
        assertEquals(1L << 62, ExactMath.mulDiv(1L << 32, 1L << 31, 2));
        assertEquals(1L << 62, ExactMath.mulSubDivCeil(1L << 32, 1L << 31, 0, 2));
        assertEquals((1L << 62) - 1, ExactMath.mulSubDiv(1L << 32, 1L << 31, 1, 2));
        assertEquals(1L << 62, ExactMath.mulSubDivCeil(1L << 32, 1L << 31, 1, 2));
        // tokens of a bucket of limit 2^63 − 1 over a minute, 59 s into the refill
        assertEquals(
                big(Long.MAX_VALUE).multiply(big(59)).divide(big(60)).longValueExact(),
                ExactMath.mulDiv(59_000_000_000L, Long.MAX_VALUE, 60_000_000_000L));
    }

    @Test
    void saturatedAddStopsAtTheLargestLong() {
        assertEquals(5, ExactMath.saturatedAdd(2, 3));
        assertEquals(Long.MAX_VALUE, ExactMath.saturatedAdd(Long.MAX_VALUE - 1, 1));
        assertEquals(Long.MAX_VALUE, ExactMath.saturatedAdd(Long.MAX_VALUE, 1));
        assertEquals(Long.MAX_VALUE, ExactMath.saturatedAdd(Long.MAX_VALUE, Long.MAX_VALUE));
        assertEquals(Long.MAX_VALUE, ExactMath.saturatedAdd(0, Long.MAX_VALUE));
    }
}
