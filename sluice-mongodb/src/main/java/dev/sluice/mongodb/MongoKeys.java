package dev.sluice.mongodb;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.BsonValue;
import org.bson.Document;

/**
 * The {@code _id} of a key's document: {@code {n: namespace, s: state name, k: key}}, or {@code {n, s, h: hash}} for
 * a key that is long, holds a NUL or is not valid UTF-16 (exact mode); and the {@code _id}s of the counter store's
 * key codecs ({@link MongoStore.KeyCodec}), with {@code {sha256: hash}} for such keys. Stateless.
 *
 * <p>A BSON string is UTF-8, and Java writes an unpaired surrogate as {@code '?'}: two such keys would share a
 * document. A NUL ends a string for some servers (mongo-java-server reads {@code "a\0b"} as {@code "a"}). Those keys,
 * and keys over {@value #MAX_KEY_BYTES} bytes (which would bloat the {@code _id} index, and exceed its 1 KB key limit
 * on MongoDB 4.0), are named by the SHA-256 of their UTF-16 code units instead, which is lossless. The two shapes
 * of {@code _id} never equal each other, so a key that happens to look like a hash is safe.
 */
final class MongoKeys {

    static final int MAX_KEY_BYTES = 256;

    static final String NAMESPACE = "n";
    static final String SHAPE = "s";
    static final String KEY = "k";
    static final String HASH = "h";

    static final String CLIENT_ID = "clientId";
    static final String USERNAME = "username";
    static final String SHA256 = "sha256";

    private MongoKeys() {}

    /** The {@code _id} of {@code key}'s document. */
    static Document id(String namespace, String shape, String key) {
        Document id = new Document(NAMESPACE, namespace).append(SHAPE, shape);
        return hashed(key) ? id.append(HASH, sha256(key)) : id.append(KEY, key);
    }

    /**
     * Allegro's {@code {clientId, username}}: {@code "abc:jane"} gives {@code {clientId: "abc", username: "jane"}}
     * (split at the first colon, so a username may hold colons), {@code "abc"} gives {@code {clientId: "abc"}}
     * without a username; a key {@link #hashed} gives {@code {sha256: hash}}. Injective: the key is the clientId,
     * then a colon and the username if there is one.
     */
    static BsonValue clientAndUser(String key) {
        if (hashed(key)) {
            return hashedId(key);
        }
        int colon = key.indexOf(':');
        if (colon < 0) {
            return new BsonDocument(CLIENT_ID, new BsonString(key));
        }
        return new BsonDocument(CLIENT_ID, new BsonString(key.substring(0, colon)))
                .append(USERNAME, new BsonString(key.substring(colon + 1)));
    }

    /** The key itself as a string; a key {@link #hashed} gives {@code {sha256: hash}}, which no string equals. */
    static BsonValue string(String key) {
        return hashed(key) ? hashedId(key) : new BsonString(key);
    }

    private static BsonDocument hashedId(String key) {
        return new BsonDocument(SHA256, new BsonString(sha256(key)));
    }

    /** Whether {@code key} is stored as its hash (and then kept in the document's {@code key} field). */
    static boolean hashed(String key) {
        if (key.length() * 3 <= MAX_KEY_BYTES) {
            return !wellFormed(key);
        }
        return key.length() > MAX_KEY_BYTES
                || !wellFormed(key)
                || key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES;
    }

    /** Valid UTF-16 without NUL. */
    private static boolean wellFormed(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c) || c == '\0') {
                return false;
            }
        }
        return true;
    }

    static String sha256(String key) {
        try {
            byte[] units = new byte[2 * key.length()]; // not getBytes(UTF_16BE), which replaces unpaired surrogates
            for (int i = 0; i < key.length(); i++) {
                units[2 * i] = (byte) (key.charAt(i) >>> 8);
                units[2 * i + 1] = (byte) key.charAt(i);
            }
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(units);
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
