package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Files that would exhaust the loader (memory, stack, time) are refused before they can, with their file, line and
 * column; and files that cannot be read are refused, never skipped.
 */
class ConfigLimitsTest {

    @TempDir
    Path dir;

    static PolicyError onlyError(Path path) {
        PolicyException e = assertThrows(PolicyException.class, () -> Policies.load(path));
        assertEquals(1, e.errors().size(), e::getMessage);
        return e.errors().get(0);
    }

    static PolicyError onlyError(String yaml) {
        PolicyException e = assertThrows(PolicyException.class, () -> Policies.parse("bad.yaml", yaml));
        assertEquals(1, e.errors().size(), e::getMessage);
        return e.errors().get(0);
    }

    /** A file of {@code size} bytes that takes no room: a sparse file, all zeros. */
    static Path sparse(Path file, long size) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
        }
        return file;
    }

    /** {@code depth} flow lists, one inside the other, as the value of a descriptor's {@code key}. */
    static String nested(int depth) {
        return "domain: deep\ndescriptors:\n  - key: " + "[".repeat(depth) + "]".repeat(depth) + "\n";
    }

    @Test
    void aFileOverTheSizeLimitIsRefusedUnread() throws IOException {
        Path huge = sparse(dir.resolve("huge.yaml"), 3L << 30);
        PolicyError e = onlyError(huge);
        assertEquals(
                huge + ":1:1: the file is 3221225472 bytes long, over the limit of 4194304 bytes (4 MiB) for one "
                        + "policy file: refused unread",
                e.toString());
        // in a directory, beside a good file: the directory is refused whole
        Files.writeString(dir.resolve("good.yaml"), "domain: good\ndescriptors:\n");
        assertTrue(onlyError(dir).toString().startsWith(huge + ":1:1: the file is 3221225472 bytes long"));
    }

    @Test
    void aFileAtTheSizeLimitLoads() throws IOException {
        String head = "domain: big\ndescriptors:\n";
        StringBuilder sb = new StringBuilder(head);
        String comment = "#" + "-".repeat(1022) + "\n";
        while (sb.length() + comment.length() < Policies.MAX_FILE_BYTES) {
            sb.append(comment);
        }
        sb.append("#".repeat((int) (Policies.MAX_FILE_BYTES - sb.length() - 1))).append('\n');
        assertEquals(Policies.MAX_FILE_BYTES, sb.length());
        Files.writeString(dir.resolve("big.yaml"), sb);
        Policies p = Policies.load(dir);
        assertEquals(List.of("big"), List.copyOf(p.domains()));
    }

    @Test
    void aTextOverTheSizeLimitIsRefused() {
        PolicyError e = onlyError("#".repeat((int) Policies.MAX_FILE_BYTES + 1));
        assertEquals(
                "bad.yaml:1:1: the text is 4194305 characters long, over the limit of 4194304 bytes (4 MiB) for "
                        + "one policy file: refused unread",
                e.toString());
    }

    @Test
    void aFileNestedDeeperThanTheLimitIsRefusedWhereItPassesIt() throws IOException {
        // 200 KB of brackets: a stack overflow in the composer before the limit
        Path deep = Files.writeString(dir.resolve("deep.yaml"), nested(100_000));
        PolicyError e = onlyError(deep);
        // line 3 "  - key: [[[…": the root mapping, the list and the descriptor are 3 levels; the 48th bracket is the
        // 51st
        assertEquals(
                deep + ":3:" + (10 + 47) + ": nested too deeply: more than 50 levels of mappings and lists, the "
                        + "limit for a policy file",
                e.toString());
        // at the limit, the file gets as far as its fields
        PolicyException atLimit = assertThrows(PolicyException.class, () -> Policies.parse("ok.yaml", nested(47)));
        assertTrue(atLimit.errors().get(0).message().startsWith("expected a string"), atLimit::getMessage);
    }

    @Test
    void blockStyleNestingIsCountedToo() {
        StringBuilder sb = new StringBuilder("domain: deep\ndescriptors:\n");
        String indent = "  ";
        for (int i = 0; i < 30; i++) {
            sb.append(indent).append("- key: k").append(i).append('\n');
            sb.append(indent).append("  descriptors:\n");
            indent += "    ";
        }
        PolicyError e = onlyError(sb.toString());
        // the root and each level of descriptors (a list, a mapping) are 2: the 25th "- key", on line 3 + 2 * 24
        assertEquals(51, e.line(), e::toString);
        assertTrue(e.message().startsWith("nested too deeply"), e::toString);
    }

    @Test
    void aliasesThatExpandPastTheNodeLimitAreRefusedAtTheAlias() {
        // each list holds ten aliases of the one before: 10^7 nodes once expanded, from a few hundred bytes
        StringBuilder sb = new StringBuilder("domain: bomb\nx0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for (int i = 1; i <= 7; i++) {
            String a = "*a" + (i - 1);
            sb.append('x')
                    .append(i)
                    .append(": &a")
                    .append(i)
                    .append(" [")
                    .append(String.join(", ", java.util.Collections.nCopies(10, a)))
                    .append("]\n");
        }
        PolicyError e = onlyError(sb.toString());
        assertTrue(e.message().startsWith("more than 1000000 nodes with its aliases expanded"), e::toString);
        assertEquals(7, e.line(), e::toString); // x5: 10^6 nodes and more
    }

    @Test
    void aRecursiveAliasIsRefused() {
        PolicyError e = onlyError("domain: r\ndescriptors: &d\n  - key: k\n    descriptors: *d\n");
        assertEquals("bad.yaml:4:18: recursive alias '*d': it stands inside the node '&d' it names", e.toString());
    }

    @Test
    void aliasesWithinTheLimitsWork() {
        Policies p = Policies.parse(
                "ok.yaml",
                """
                domain: ok
                descriptors:
                  - key: a
                    rate_limit: &standard {unit: minute, requests_per_unit: 5}
                  - key: b
                    rate_limit: *standard
                """);
        assertEquals(2, p.rules("ok").size());
    }

    @Test
    void errorsPastAHundredAreCountedNotListed() {
        StringBuilder sb = new StringBuilder("domain: many\ndescriptors:\n");
        for (int i = 0; i < 1000; i++) {
            sb.append("  - {key: k").append(i).append(", bogus: 1}\n");
        }
        PolicyException e = assertThrows(PolicyException.class, () -> Policies.parse("many.yaml", sb.toString()));
        assertEquals(101, e.errors().size());
        assertEquals(
                "many.yaml:0:0: and 900 more error(s), not shown: fix these first",
                e.errors().get(100).toString());
    }

    @Test
    void aDanglingLinkIsRefusedNotSkipped() throws IOException {
        Files.writeString(dir.resolve("good.yaml"), "domain: good\ndescriptors:\n");
        Path link = Files.createSymbolicLink(dir.resolve("gone.yaml"), Path.of("..data", "gone.yaml"));
        PolicyError e = onlyError(dir);
        assertEquals(
                link + ":0:0: a symbolic link to ..data/gone.yaml, which does not exist (a ConfigMap update half "
                        + "done?): refused, not skipped; remove the link to remove its domain",
                e.toString());
        assertTrue(onlyError(link).message().startsWith("a symbolic link to ..data/gone.yaml"));
    }

    @Test
    void aMissingFileAndOneNotUtf8AreRefused() throws IOException {
        Path missing = dir.resolve("missing.yaml");
        assertEquals(missing + ":0:0: no such file", onlyError(missing).toString());
        Path latin1 = Files.write(dir.resolve("latin1.yaml"), new byte[] {'#', ' ', (byte) 0xE9, '\n'});
        assertTrue(onlyError(latin1).message().startsWith("not UTF-8 text"), onlyError(latin1)::toString);
        assertEquals(
                latin1 + ":1:3: not UTF-8 text: a malformed byte sequence at byte 2 (0xe9)",
                onlyError(latin1).toString());
    }

    /** Where the first byte that is not UTF-8 is, as an editor counts: lines, and characters (not bytes) in a line. */
    @Test
    void theFirstByteNotUtf8IsNamedByLineAndColumn() throws IOException {
        byte[] head = "domain: d\n# caf\u00e9 \ud83d\ude00 ".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] bytes = java.util.Arrays.copyOf(head, head.length + 2);
        bytes[head.length] = (byte) 0xC3; // a lead byte followed by one that cannot continue it
        bytes[head.length + 1] = '\n';
        Path file = Files.write(dir.resolve("mixed.yaml"), bytes);
        assertEquals(
                file + ":2:10: not UTF-8 text: a malformed byte sequence at byte " + head.length + " (0xc3)",
                onlyError(file).toString());
    }

    @Test
    void anEmptyDirectoryLoadsAsNoDomain() {
        assertTrue(Policies.load(dir).domains().isEmpty());
    }
}
