package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.gson.JsonParser;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

class JsonStringTest {

    /** Every character of the Basic Multilingual Plane but the surrogates, and a pair of them (U+1F600). */
    private static String everyCharacter() {
        StringBuilder b = new StringBuilder();
        for (char c = 0; c < Character.MIN_SURROGATE; c++) {
            b.append(c);
        }
        for (int c = Character.MAX_SURROGATE + 1; c <= 0xFFFF; c++) {
            b.append((char) c);
        }
        return b.append("\ud83d\ude00").toString();
    }

    @Test
    void readsBackAsTheSameStringInJsonAndInYaml() {
        String s = everyCharacter();
        String quoted = JsonString.quote(s);
        assertEquals(s, JsonParser.parseString(quoted).getAsString());
        assertEquals(s, new Load(LoadSettings.builder().build()).loadFromString(quoted));
    }

    @Test
    void leavesNoCharacterThatEndsOrHidesALineOrThatYamlRefuses() {
        String quoted = JsonString.quote(everyCharacter());
        quoted.chars()
                .forEach(c -> assertFalse(
                        c < 0x20
                                || c == 0x7f
                                || (c >= 0x80 && c <= 0x9f)
                                || c == 0x2028
                                || c == 0x2029
                                || c == 0xfeff
                                || c >= 0xfffe,
                        () -> "unescaped U+" + Integer.toHexString(c)));
    }

    @Test
    void writesTheUsualEscapesShort() {
        assertEquals(
                "\"a\\\"b\\\\c\\nd\\re\\tf\\u0000\\u007f\\u2028\"", JsonString.quote("a\"b\\c\nd\re\tf\0\u007f\u2028"));
        assertEquals("\"plain, é €\"", JsonString.quote("plain, é €"));
    }
}
