package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every configuration envoyproxy/ratelimit refuses is refused here, with the file, line, column and field of the
 * problem and a message that says what is expected; and the misuse of the extensions.
 */
class ConfigErrorsTest {

    static List<PolicyError> errors(String yaml) {
        PolicyException e = assertThrows(PolicyException.class, () -> Policies.parse("bad.yaml", yaml));
        return e.errors();
    }

    static PolicyError only(String yaml) {
        List<PolicyError> errors = errors(yaml);
        assertEquals(1, errors.size(), () -> "one error expected, was " + errors);
        return errors.get(0);
    }

    static void at(PolicyError e, int line, int column, String field, String messagePart) {
        assertEquals("bad.yaml", e.file());
        assertEquals(line, e.line(), e::toString);
        assertEquals(column, e.column(), e::toString);
        assertEquals(field, e.field(), e::toString);
        assertTrue(e.message().contains(messagePart), () -> "'" + messagePart + "' not in " + e);
    }

    @Test
    void duplicateKey() {
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: key1
                    value: value1

                  - key: key1
                    value: value1
                """),
                6,
                5,
                "descriptors[1]",
                "composite key 'test-domain.key1_value1'");
    }

    @Test
    void badUnit() {
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: key1
                    value: value1
                    rate_limit:
                      unit: foo
                      requests_per_unit: 5
                """),
                6,
                13,
                "descriptors[0].rate_limit.unit",
                "invalid rate limit unit 'foo'");
    }

    @Test
    void misspelledFields() {
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: key1
                    value: value1
                    ratelimit:
                      unit: day
                      requests_per_unit: 5
                """),
                5,
                5,
                "descriptors[0].ratelimit",
                "unknown field 'ratelimit' (did you mean 'rate_limit'?)");
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: key1
                    value: value1
                    rate_limit:
                      unit: day
                      requestsperunit: 5
                """),
                7,
                7,
                "descriptors[0].rate_limit.requestsperunit",
                "unknown field 'requestsperunit' (did you mean 'requests_per_unit'?)");
    }

    @Test
    void aKnownFieldAtTheWrongLevel() {
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: key1
                    unit: second
                """),
                4,
                5,
                "descriptors[0].unit",
                "belongs at another level");
    }

    @Test
    void emptyKey() {
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - value: value1
                """),
                3,
                5,
                "descriptors[0].key",
                "every descriptor has a non-empty key");
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: ""
                """),
                3,
                10,
                "descriptors[0].key",
                "non-empty key");
    }

    @Test
    void nonStringKey() {
        List<PolicyError> errors = errors(
                """
                0.25: test-domain
                descriptors:
                  - key: key1
                    value: value1
                    rate_limit: {unit: day, requests_per_unit: 5}
                """);
        at(errors.get(0), 1, 1, "", "key is not of type string: 0.25");
        at(errors.get(1), 1, 1, "domain", "every file names its domain");
    }

    @Test
    void nonMapList() {
        List<PolicyError> errors = errors(
                """
                domain: test-domain
                descriptors:
                  - a
                  - b
                """);
        assertEquals(2, errors.size(), errors::toString);
        at(errors.get(0), 3, 5, "descriptors[0]", "was 'a'");
        at(errors.get(1), 4, 5, "descriptors[1]", "was 'b'");
    }

    @Test
    void unlimitedWithUnit() {
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: foo
                    rate_limit:
                      unlimited: true
                      unit: day
                      requests_per_unit: 25
                """),
                6,
                13,
                "descriptors[0].rate_limit.unit",
                "should not specify rate limit unit when unlimited");
    }

    @Test
    void replacesItselfOrNothing() {
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: key1
                    value: value1
                    descriptors:
                      - key: subkey1
                        rate_limit:
                          name: self
                          replaces:
                            - name: self
                          unit: second
                          requests_per_unit: 5
                """),
                10,
                21,
                "descriptors[0].descriptors[0].rate_limit.replaces[0].name",
                "replaces should not contain name of same descriptor");
        at(
                only(
                        """
                domain: test-domain
                descriptors:
                  - key: key1
                    value: value1
                    descriptors:
                      - key: subkey1
                        rate_limit:
                          name: self
                          replaces:
                            - name:
                          unit: second
                          requests_per_unit: 5
                """),
                10,
                15,
                "descriptors[0].descriptors[0].rate_limit.replaces[0].name",
                "should not have an empty replaces entry");
    }

    @Test
    void badYaml() {
        PolicyError e = only("'''\n");
        assertEquals(2, e.line(), e::toString);
        assertEquals(1, e.column(), e::toString);
        assertTrue(e.message().startsWith("bad YAML: "), e::toString);
        assertTrue(e.message().contains("end of stream"), e::toString);
    }

    @Test
    void missingDomain() {
        at(only("descriptors:\n"), 1, 1, "domain", "every file names its domain");
        at(only(""), 1, 1, "domain", "this one is empty");
    }

    @Test
    void duplicateDomainAcrossFiles(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("a.yaml"), "domain: test-domain\ndescriptors:\n");
        Files.writeString(dir.resolve("b.yaml"), "# the same domain again\ndomain: test-domain\n");
        PolicyException e = assertThrows(PolicyException.class, () -> Policies.load(dir));
        assertEquals(1, e.errors().size(), e::toString);
        PolicyError error = e.errors().get(0);
        assertEquals(dir.resolve("b.yaml").toString(), error.file());
        assertEquals(2, error.line());
        assertEquals(9, error.column());
        assertEquals("domain", error.field());
        assertTrue(error.message().contains("duplicate domain 'test-domain'"), error::toString);
        assertTrue(error.getClass() == PolicyError.class);
        assertTrue(e.getMessage().contains(dir.resolve("b.yaml") + ":2:9: domain: duplicate domain"), e::getMessage);
    }

    @Test
    void everyErrorOfAFileIsReportedAtOnce() {
        List<PolicyError> errors = errors(
                """
                domain: test-domain
                descriptors:
                  - key: a
                    rate_limit: {unit: fortnight, requests_per_unit: 5}
                  - key: b
                    rate_limit: {unit: second, requests_per_unit: -1}
                  - key: c
                    shadow_mode: maybe
                  - key: d
                    rate_limit: {window: 10x, requests_per_unit: 5}
                """);
        assertEquals(4, errors.size(), errors::toString);
        at(errors.get(0), 4, 24, "descriptors[0].rate_limit.unit", "invalid rate limit unit 'fortnight'");
        at(errors.get(1), 6, 51, "descriptors[1].rate_limit.requests_per_unit", "expected a whole number");
        at(errors.get(2), 8, 18, "descriptors[2].shadow_mode", "expected true or false, was 'maybe'");
        at(errors.get(3), 10, 26, "descriptors[3].rate_limit.window", "expected a duration");
    }

    @Test
    void extensionsAreValidatedToo() {
        at(
                only("""
                domain: d
                algorithm: sliding_tale
                """),
                2,
                12,
                "algorithm",
                "unknown algorithm 'sliding_tale'");
        at(
                only(
                        """
                domain: d
                descriptors:
                  - key: a
                    mode: shadow
                    rate_limit: {unit: second, requests_per_unit: 1}
                """),
                4,
                11,
                "descriptors[0].mode",
                "expected enforce, dry_run, shadow_ban or quota");
        at(
                only(
                        """
                domain: d
                descriptors:
                  - key: a
                    shadow_mode: true
                    mode: shadow_ban
                    rate_limit: {unit: second, requests_per_unit: 1}
                """),
                5,
                11,
                "descriptors[0].mode",
                "contradicts");
        at(
                only(
                        """
                domain: d
                descriptors:
                  - key: a
                    rate_limit: {unit: second, window: 1s, requests_per_unit: 1}
                """),
                4,
                40,
                "descriptors[0].rate_limit.window",
                "either unit or window");
        at(
                only(
                        """
                domain: d
                descriptors:
                  - key: a
                    rate_limit: {unit: second, requests_per_unit: 1}
                    rate_limits:
                      - {window: 1s, requests_per_unit: 1}
                """),
                5,
                5,
                "descriptors[0].rate_limits",
                "either rate_limit or rate_limits");
        at(
                only(
                        """
                domain: d
                descriptors:
                  - key: a
                    value: plain
                    share_threshold: true
                    rate_limit: {unit: second, requests_per_unit: 1}
                """),
                5,
                22,
                "descriptors[0].share_threshold",
                "wildcard value");
        at(
                only(
                        """
                domain: d
                descriptors:
                  - key: a
                    rate_limits:
                      - {window: 0s, requests_per_unit: 1}
                """),
                5,
                18,
                "descriptors[0].rate_limits[0].window",
                "above zero");
    }

    @Test
    void parseOfSeveralSourcesNamesEachFile() {
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> Policies.parse(
                        Map.of("one.yaml", "domain: a\ndescriptors:\n  - key: x\n    rate_limit: {unit: sec}\n")));
        assertEquals("one.yaml", e.errors().get(0).file());
        assertEquals(4, e.errors().get(0).line());
    }
}
