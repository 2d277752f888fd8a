package dev.sluice.postgres;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Row ids and readable keys, for both tables. A row is found by the SHA-256 of the parts of its identity, each as its
 * length and its UTF-16 code units, so that every distinct string (lone surrogates and U+0000 included) has a row of
 * its own, no two concatenations collide, and the id has a fixed width of 32 bytes whatever the key's length.
 */
final class Keys {

    private static final int KEY_IN_MESSAGES = 80;

    private Keys() {}

    /** The SHA-256 of {@code prefix} (some parts already encoded by {@link #parts}) followed by {@code last}. */
    static byte[] digest(byte[] prefix, String last) {
        MessageDigest d = sha256();
        d.update(prefix);
        d.update(part(last));
        return d.digest();
    }

    /** {@code parts} encoded one after the other, for {@link #digest}. */
    static byte[] parts(String... parts) {
        byte[][] encoded = new byte[parts.length][];
        int size = 0;
        for (int i = 0; i < parts.length; i++) {
            encoded[i] = part(parts[i]);
            size += encoded[i].length;
        }
        ByteBuffer b = ByteBuffer.allocate(size);
        for (byte[] e : encoded) {
            b.put(e);
        }
        return b.array();
    }

    private static byte[] part(String s) {
        ByteBuffer b = ByteBuffer.allocate(4 + 2 * s.length()).putInt(s.length());
        for (int i = 0; i < s.length(); i++) {
            b.putChar(s.charAt(i));
        }
        return b.array();
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** The key as stored for reading: PostgreSQL text cannot hold U+0000, shown as U+2400 instead. */
    static String readable(String key) {
        return key.indexOf('\0') < 0 ? key : key.replace('\0', '\u2400');
    }

    /** The key shortened for an exception's message. */
    static String abbreviate(String key) {
        return key.length() <= KEY_IN_MESSAGES ? key : key.substring(0, KEY_IN_MESSAGES) + "…";
    }
}
