package dev.sluice.bench;

/** Pre-generated keys, so that no benchmark measures string building. */
public final class Keys {

    private static final String PREFIX = "client:";
    private static final int DIGITS = 7;

    private Keys() {}

    /** {@code n} distinct keys shaped like a real per-client key: {@code "client:0000000"}, {@code "client:0000001"}, ... */
    public static String[] generate(int n) {
        String[] keys = new String[n];
        char[] chars = (PREFIX + "0".repeat(DIGITS)).toCharArray();
        for (int i = 0; i < n; i++) {
            int v = i;
            for (int d = chars.length - 1; d >= PREFIX.length(); d--) {
                chars[d] = (char) ('0' + v % 10);
                v /= 10;
            }
            keys[i] = new String(chars);
        }
        return keys;
    }
}
