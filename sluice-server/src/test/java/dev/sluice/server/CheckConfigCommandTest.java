package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code check-config} on files that would exhaust a loader, and on a directory with nothing in it. */
class CheckConfigCommandTest {

    @TempDir
    Path dir;

    record Run(int status, String out, String err) {}

    static Run checkConfig(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = Main.run(
                prepend(args),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static List<String> prepend(String... args) {
        List<String> all = new java.util.ArrayList<>();
        all.add("check-config");
        all.addAll(List.of(args));
        return all;
    }

    @Test
    void aHugeFileIsOneErrorAtItsStart() throws IOException {
        Path huge = dir.resolve("huge.yaml");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(3L << 30); // sparse: takes no room
        }
        Run r = checkConfig(huge.toString());
        assertEquals(1, r.status(), r::err);
        assertEquals(
                huge
                        + ":1:1: the file is 3221225472 bytes long, over the limit of 4194304 bytes (4 MiB) for one policy "
                        + "file: refused unread\n1 error(s)\n",
                r.err());
    }

    @Test
    void aDeeplyNestedFileIsOneErrorWhereItPassesTheLimit() throws IOException {
        Path deep = Files.writeString(
                dir.resolve("deep.yaml"),
                "domain: deep\ndescriptors:\n  - key: " + "[".repeat(100_000) + "]".repeat(100_000) + "\n");
        Run r = checkConfig(deep.toString());
        assertEquals(1, r.status(), r::err);
        assertEquals(
                deep + ":3:57: nested too deeply: more than 50 levels of mappings and lists, the limit for a policy "
                        + "file\n1 error(s)\n",
                r.err());
        assertFalse(r.err().contains("\tat "), "no stack trace");
    }

    @Test
    void aDirectoryWithNoPolicyFileIsAnError() {
        Run r = checkConfig(dir.toString());
        assertEquals(1, r.status(), r::err);
        assertEquals(
                dir + ":0:0: no domain: the directory holds no policy file (*.yaml, *.yml), so nothing would be "
                        + "limited\n1 error(s)\n",
                r.err());
        assertEquals("", r.out());
    }
}
