package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The test parser against RFC 8941's examples and the draft's, so the filter's fields are checked by a parser that is right. */
class StructuredFieldsTest {

    @Test
    void parsesTheDraftsExamples() {
        List<StructuredFields.Item> items =
                StructuredFields.parseItems("\"burst\";q=100;w=60,\"daily\";q=1000;w=86400");
        assertEquals(2, items.size());
        assertEquals("burst", items.get(0).value());
        assertEquals(100L, items.get(0).param("q"));
        assertEquals(60L, items.get(0).param("w"));
        assertEquals("daily", items.get(1).value());
        assertEquals(86400L, items.get(1).param("w"));

        StructuredFields.Item pk = StructuredFields.parseItems("\"default\";r=999;pk=:dHJpYWwxMjEzMjM=:")
                .get(0);
        assertArrayEquals("trial121323".getBytes(StandardCharsets.US_ASCII), (byte[]) pk.param("pk"));

        StructuredFields.Item qu = StructuredFields.parseItems(
                        "\"peruser\";q=65535;qu=\"content-bytes\";w=10;pk=:sdfjLJUOUH==:")
                .get(0);
        assertEquals("content-bytes", qu.param("qu"));
    }

    @Test
    void parsesEveryBareItemAndInnerLists() {
        List<StructuredFields.Member> list =
                StructuredFields.parseList("  tok/en:x;a, -12;b=?0, 4.5, \"a\\\"b\\\\c\", (1 \"x\");c=*d , ?1  ");
        assertEquals(6, list.size());
        assertEquals(new StructuredFields.Token("tok/en:x"), ((StructuredFields.Item) list.get(0)).value());
        assertEquals(true, list.get(0).params().get("a"));
        assertEquals(-12L, ((StructuredFields.Item) list.get(1)).value());
        assertEquals(false, list.get(1).params().get("b"));
        assertEquals(new BigDecimal("4.5"), ((StructuredFields.Item) list.get(2)).value());
        assertEquals("a\"b\\c", ((StructuredFields.Item) list.get(3)).value());
        StructuredFields.InnerList inner = (StructuredFields.InnerList) list.get(4);
        assertEquals(
                List.of(1L, "x"),
                inner.items().stream().map(StructuredFields.Item::value).toList());
        assertEquals(new StructuredFields.Token("*d"), inner.params().get("c"));
        assertEquals(true, ((StructuredFields.Item) list.get(5)).value());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "\"a\",", // trailing comma
                "\"a\" \"b\"", // no comma
                "\"unterminated",
                "\"bad \\n escape\"",
                "\"tab\there\"",
                "\"a\";Q=1", // uppercase key
                "\"a\";q=1.", // decimal ending in '.'
                "\"a\";q=1.2345", // 4 fractional digits
                "\"a\";q=1234567890123456", // 16-digit integer
                "\"a\";q=?2",
                "\"a\";q=:abc",
                "é",
                "(1 2",
            })
    void refusesWhatTheRfcRefuses(String field) {
        assertThrows(IllegalArgumentException.class, () -> StructuredFields.parseList(field));
    }
}
