package dev.sluice.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import dev.sluice.testkit.Await;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Debian's {@code chromium}, headless, driven over the DevTools protocol (a {@link WebSocket} from
 * {@code java.net.http}): open a page, evaluate an expression in it, take a screenshot.
 *
 * <p>When {@code chromium} is not on the {@code PATH}, {@link #start} installs it once with {@code apt-get} if it runs
 * as root on a machine with {@code apt-get}, printing what it does, and otherwise fails naming what to install: a test
 * that needs the browser never skips.
 */
final class Chromium implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");
    private static final Pattern PAGE =
            Pattern.compile("\"type\"\\s*:\\s*\"page\"[^{}]*?\"webSocketDebuggerUrl\"\\s*:\\s*\"(ws://[^\"]+)\"");
    private static final Duration INSTALL_BOUND = Duration.ofMinutes(20);
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private final Process process;
    private final Path profile;
    private final List<String> err = Collections.synchronizedList(new ArrayList<>());
    private volatile String browserSocket;
    private Session page;

    private Chromium(Process process, Path profile) {
        this.process = process;
        this.profile = profile;
    }

    /** Starts a headless browser with a fresh profile and a page of the given size in CSS pixels, on {@code about:blank}. */
    static Chromium start(int width, int height) {
        Path executable = executable();
        Path profile;
        try {
            profile = Files.createTempDirectory("sluice-chromium-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        List<String> command = List.of(
                executable.toString(),
                "--headless",
                "--no-sandbox", // as root, in a container
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--disable-quic",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--mute-audio",
                "--hide-scrollbars",
                "--user-data-dir=" + profile,
                "--window-size=" + width + "," + height,
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                "about:blank");
        Process process;
        try {
            process = new ProcessBuilder(command).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
        Chromium c = new Chromium(process, profile);
        Runtime.getRuntime().addShutdownHook(new Thread(c::kill, "chromium-kill"));
        pump(process.getInputStream(), line -> {});
        pump(process.getErrorStream(), line -> {
            c.err.add(line);
            Matcher m = LISTENING.matcher(line);
            if (m.find()) {
                c.browserSocket = m.group(1);
            }
        });
        try {
            Await.until("chromium's DevTools address (stderr: " + c.err + ")", Await.GENEROUS, () -> {
                if (!process.isAlive()) {
                    throw new AssertionError(
                            "chromium exited with " + process.exitValue() + "; stderr: " + String.join("\n", c.err));
                }
                return c.browserSocket != null;
            });
            URI list = URI.create(c.browserSocket.replaceFirst("^ws://([^/]+)/.*$", "http://$1/json/list"));
            String socket = Await.succeeds("the page target of chromium", Await.GENEROUS, () -> {
                Matcher m = PAGE.matcher(get(list));
                if (!m.find()) {
                    throw new IllegalStateException("no page target yet");
                }
                return m.group(1);
            });
            c.page = new Session(URI.create(socket));
            // the page exactly this size, whatever the window's decorations take
            c.page.call(
                    "Emulation.setDeviceMetricsOverride",
                    "{\"width\":" + width + ",\"height\":" + height + ",\"deviceScaleFactor\":1,\"mobile\":false}");
            return c;
        } catch (RuntimeException | Error e) {
            c.close();
            throw e;
        }
    }

    /** Loads {@code url} in the page and waits until it has loaded (its scripts may still be fetching). */
    void navigate(URI url) {
        Struct r = page.call("Page.navigate", "{\"url\":" + JsonString.quote(url.toString()) + "}");
        if (r.containsFields("errorText")) {
            throw new AssertionError("chromium could not load " + url + ": " + r.getFieldsOrThrow("errorText"));
        }
        String loaded =
                "location.href === " + JsonString.quote(url.toString()) + " && document.readyState === 'complete'";
        Await.until(url + " loaded in chromium", Await.GENEROUS, () -> evaluate(loaded)
                .getBoolValue());
    }

    /**
     * The value of a JavaScript expression in the page, as JSON would carry it (strings, numbers, objects).
     *
     * @throws IllegalStateException if the expression throws in the page (which may be changing under it)
     */
    Value evaluate(String expression) {
        Struct r = page.call(
                "Runtime.evaluate", "{\"expression\":" + JsonString.quote(expression) + ",\"returnByValue\":true}");
        if (r.containsFields("exceptionDetails")) {
            throw new IllegalStateException("evaluating " + expression + " in the page failed: "
                    + r.getFieldsOrThrow("exceptionDetails")
                            .getStructValue()
                            .getFieldsOrDefault("exception", Value.getDefaultInstance()));
        }
        return r.getFieldsOrThrow("result").getStructValue().getFieldsOrDefault("value", Value.getDefaultInstance());
    }

    /** A PNG of the page as the window shows it. */
    byte[] screenshot() {
        Struct r = page.call("Page.captureScreenshot", "{\"format\":\"png\"}");
        return Base64.getDecoder().decode(r.getFieldsOrThrow("data").getStringValue());
    }

    @Override
    public void close() {
        if (page != null) {
            page.close();
        }
        kill();
        try (Stream<Path> files = Files.walk(profile)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
            // a temporary directory: left behind if it cannot be removed
        }
    }

    private void kill() {
        List<ProcessHandle> children = process.descendants().toList();
        process.destroy(); // SIGTERM: chromium closes its own child processes
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        children.forEach(ProcessHandle::destroyForcibly);
    }

    // ---- finding and installing chromium

    private static Path installed;

    /** {@code chromium} on the {@code PATH}, installed first if it is missing and this test may install it. */
    static synchronized Path executable() {
        if (installed != null) {
            return installed;
        }
        Path found = onPath("chromium");
        if (found == null) {
            install();
            found = onPath("chromium");
            if (found == null) {
                throw new AssertionError(
                        "apt-get installed chromium, but there is still no chromium on the PATH: install Debian's"
                                + " chromium (apt-get install chromium)");
            }
        }
        System.out.println("[chromium] " + found + ": "
                + run(List.of(found.toString(), "--version")).strip());
        installed = found;
        return found;
    }

    private static void install() {
        Path aptGet = onPath("apt-get");
        boolean root = run(List.of("id", "-u")).strip().equals("0");
        if (aptGet == null || !root) {
            throw new AssertionError("the dashboard test needs a browser and chromium is not on the PATH"
                    + (aptGet == null ? " (no apt-get here)" : " (not root, so it cannot install it)")
                    + ": install Debian's chromium (apt-get install chromium)");
        }
        System.out.println("[chromium] chromium is not on the PATH; installing Debian's chromium, once:");
        // Another build on the machine may hold dpkg's lock: wait for it rather than fail.
        List<String> apt = List.of(aptGet.toString(), "-o", "DPkg::Lock::Timeout=600");
        List<String> update = new ArrayList<>(apt);
        update.add("update");
        List<String> add = new ArrayList<>(apt);
        add.addAll(List.of("install", "-y", "chromium"));
        for (List<String> command : List.of(update, add)) {
            System.out.println("[chromium] $ " + String.join(" ", command));
            ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true);
            b.environment().put("DEBIAN_FRONTEND", "noninteractive");
            int status;
            try {
                Process p = b.start();
                pump(p.getInputStream(), line -> System.out.println("[chromium]   " + line));
                if (!p.waitFor(INSTALL_BOUND.toMinutes(), TimeUnit.MINUTES)) {
                    p.destroyForcibly();
                    throw new AssertionError(String.join(" ", command) + " still running after " + INSTALL_BOUND
                            + ": install Debian's chromium (apt-get install chromium)");
                }
                status = p.exitValue();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
            if (status != 0) {
                throw new AssertionError(String.join(" ", command) + " failed with status " + status
                        + ": install Debian's chromium (apt-get install chromium)");
            }
        }
    }

    private static Path onPath(String name) {
        String path = System.getenv("PATH");
        for (String dir : (path == null ? "/usr/bin:/bin" : path).split(File.pathSeparator)) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, name);
            if (Files.isRegularFile(p) && Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    private static String run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            byte[] out = p.getInputStream().readAllBytes();
            p.waitFor(60, TimeUnit.SECONDS);
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    private static String get(URI uri) {
        try {
            HttpResponse<String> r = HTTP.send(
                    HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void pump(InputStream in, Consumer<String> lines) {
        Thread t = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                        for (String line; (line = r.readLine()) != null; ) {
                            lines.accept(line);
                        }
                    } catch (IOException e) {
                        // the process is gone
                    }
                },
                "chromium-output");
        t.setDaemon(true);
        t.start();
    }

    /** One DevTools connection: commands sent with an id, answered by the message with that id. */
    private static final class Session implements WebSocket.Listener, AutoCloseable {
        private static final Duration ANSWER_BOUND = Duration.ofSeconds(60);

        private final BlockingQueue<String> messages = new LinkedBlockingQueue<>();
        private final StringBuilder partial = new StringBuilder();
        private final WebSocket socket;
        private int nextId = 1;

        Session(URI uri) {
            this.socket = HTTP.newWebSocketBuilder()
                    .connectTimeout(Duration.ofSeconds(30))
                    .buildAsync(uri, this)
                    .join();
        }

        @Override
        public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                messages.add(partial.toString());
                partial.setLength(0);
            }
            webSocket.request(1);
            return null;
        }

        /** Sends a command and returns its {@code result}; an {@code error} answer fails. */
        synchronized Struct call(String method, String params) {
            int id = nextId++;
            socket.sendText("{\"id\":" + id + ",\"method\":\"" + method + "\",\"params\":" + params + "}", true)
                    .join();
            long deadline = System.nanoTime() + ANSWER_BOUND.toNanos();
            while (true) {
                String message;
                try {
                    message = messages.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
                if (message == null) {
                    throw new AssertionError("chromium did not answer " + method + " within " + ANSWER_BOUND);
                }
                Struct.Builder b = Struct.newBuilder();
                try {
                    JsonFormat.parser().merge(message, b);
                } catch (InvalidProtocolBufferException e) {
                    throw new AssertionError("not JSON from chromium: " + message, e);
                }
                Value answerId = b.getFieldsOrDefault("id", Value.getDefaultInstance());
                if (answerId.getNumberValue() != id) {
                    continue; // an event, or the answer to an earlier command
                }
                if (b.containsFields("error")) {
                    throw new AssertionError(method + " failed: " + b.getFieldsOrThrow("error"));
                }
                return b.getFieldsOrDefault("result", Value.getDefaultInstance())
                        .getStructValue();
            }
        }

        @Override
        public void close() {
            socket.abort();
        }
    }
}
