package dev.sluice.redis;

import dev.sluice.Algorithm;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * A Lua script and its SHA-1 digest for {@code EVALSHA}: that of one algorithm ({@code common.lua}, the algorithm's
 * own part(s), {@code single.lua}), the batch script ({@code common.lua}, every algorithm, {@code group.lua},
 * {@code batch.lua}), or the counter store's compare-and-set. The algorithms are written once, as functions both tails call. Immutable.
 */
final class LuaScript {

    private static final Map<Algorithm, LuaScript> SCRIPTS = new EnumMap<>(Algorithm.class);

    static {
        SCRIPTS.put(Algorithm.FIXED_WINDOW, load("fixed_window", "fixed_window", "single"));
        SCRIPTS.put(Algorithm.SLIDING_LOG, load("sliding_log", "expiring_log", "sliding_log", "single"));
        SCRIPTS.put(
                Algorithm.SLIDING_WINDOW_COUNTER,
                load("sliding_window_counter", "expiring_log", "sliding_window_counter", "single"));
        SCRIPTS.put(Algorithm.SLIDING_TAIL, load("sliding_tail", "sliding_tail", "single"));
        SCRIPTS.put(Algorithm.TOKEN_BUCKET, load("token_bucket", "token_bucket", "single"));
        SCRIPTS.put(Algorithm.LEAKY_BUCKET, load("leaky_bucket", "leaky_bucket", "single"));
    }

    /**
     * Several requests, single or joint (all or nothing, {@code group.lua}), each by its deadline, in one run
     * ({@code batch.lua}).
     */
    static final LuaScript BATCH = overEveryAlgorithm("batch");

    private final String name;
    private final String text;
    private final String sha;

    private LuaScript(String name, String text) {
        this.name = name;
        this.text = text;
        this.sha = sha1(text);
    }

    /** The compare-and-set of synchronized mode's counter records ({@code counter_cas.lua}, on its own). */
    static final LuaScript COUNTER_CAS = new LuaScript("counter_cas", resource("counter_cas"));

    static LuaScript of(Algorithm algorithm) {
        return Objects.requireNonNull(SCRIPTS.get(algorithm), "a script is loaded for every algorithm");
    }

    /** The script's source, for {@code EVAL}. */
    String text() {
        return text;
    }

    /** The lowercase hex SHA-1 of {@link #text()}, for {@code EVALSHA}. */
    String sha() {
        return sha;
    }

    /** A script that decides keys of every algorithm, one or several at a time: every algorithm's part, then its own. */
    private static LuaScript overEveryAlgorithm(String name) {
        return load(
                name,
                "expiring_log",
                "sliding_log",
                "sliding_window_counter",
                "sliding_tail",
                "token_bucket",
                "leaky_bucket",
                "fixed_window",
                "group",
                name);
    }

    /** The script {@code name}: {@code common.lua}, then {@code parts} in order. */
    private static LuaScript load(String name, String... parts) {
        StringBuilder text = new StringBuilder(resource("common"));
        for (String part : parts) {
            text.append('\n').append(resource(part));
        }
        return new LuaScript(name, text.toString());
    }

    static String resource(String name) {
        try (InputStream in = LuaScript.class.getResourceAsStream(name + ".lua")) {
            if (in == null) {
                throw new IllegalStateException("missing script resource " + name + ".lua");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read script resource " + name + ".lua", e);
        }
    }

    private static String sha1(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8));
            StringBuilder hex = new StringBuilder(40);
            for (byte b : digest) {
                hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
            }
            return hex.toString();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is not available", e);
        }
    }

    @Override
    public String toString() {
        return "LuaScript[" + name + ", " + sha + "]";
    }
}
