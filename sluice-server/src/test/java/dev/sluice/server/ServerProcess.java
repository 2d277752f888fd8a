package dev.sluice.server;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import dev.sluice.testkit.Await;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitResponse;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The real jar, {@code sluice-server/target/sluice-server.jar}, run as a separate process, as a user runs it, with
 * clients to talk to it: a gRPC channel over the generated Envoy stubs, and {@link HttpClient}.
 */
final class ServerProcess implements AutoCloseable {
    static final Path JAR = Path.of(System.getProperty("sluice.server.jar", "target/sluice-server.jar"));
    private static final Pattern LISTENING =
            Pattern.compile("sluice: (grpc|http|debug) listening on ([^\\s\"]+):(\\d+)");
    /** HTTP/1.1, said so: the JDK's client would otherwise ask every new connection to upgrade to h2c. */
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    /** HTTP/2 over cleartext, reached by {@code Upgrade: h2c} on each new connection. */
    private static final HttpClient HTTP2 = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_2)
            .connectTimeout(Duration.ofSeconds(10))
            .build();

    private final String name;
    private final Process process;
    private final List<String> out = Collections.synchronizedList(new ArrayList<>());
    private final List<String> err = Collections.synchronizedList(new ArrayList<>());
    private volatile int grpcPort = -1;
    private volatile int httpPort = -1;
    private volatile int debugPort = -1;
    private ManagedChannel channel;

    private ServerProcess(String name, Process process) {
        this.name = name;
        this.process = process;
        pump(process.getInputStream(), out, true);
        pump(process.getErrorStream(), err, false);
    }

    /** Starts {@code serve --http-port 0 --grpc-port 0} with {@code args} and waits until both ports are known. */
    static ServerProcess serve(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of("serve", "--http-port", "0", "--grpc-port", "0"));
        command.addAll(List.of(args));
        return ready(start(env, command));
    }

    /**
     * Starts {@code command} (the jar's {@code serve}, or a launcher of it) with {@code env} added to this JVM's
     * environment, and waits until both ports are known.
     */
    static ServerProcess launch(Map<String, String> env, List<String> command) {
        return ready(new ServerProcess(String.join(" ", command), exec(env, command)));
    }

    /** The command that runs the jar with {@code args}, as {@link #serve} runs it. */
    static List<String> javaJar(String... args) {
        List<String> command = new ArrayList<>(java());
        command.add("-jar");
        command.add(JAR.toString());
        command.addAll(List.of(args));
        return command;
    }

    /**
     * {@code java} and the options of every process of the jar: a small heap; the client compiler only (a short
     * process starts sooner); no hsperfdata file (when another process holds the file of this JVM's PID, a JVM of
     * another PID namespace sharing /tmp, the JVM warns on standard output, which a command's compared output must
     * not get); and the jar's class data sharing archive, {@link ClassArchive}, when there is one.
     */
    static List<String> java() {
        List<String> command = new ArrayList<>(JVM);
        command.addAll(ClassArchive.OPTIONS);
        return command;
    }

    private static final List<String> JVM = List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:TieredStopAtLevel=1",
            "-XX:-UsePerfData");

    /**
     * A class data sharing archive of the classes a {@code serve} process of the jar loads, made once for the jar
     * (the first process of the suite to need it makes it, under a file lock the other test JVMs wait on) and mapped
     * by every process after: each then starts without loading and verifying those classes from the jar again, about
     * a second less of CPU on each of the suite's many starts. Only start-up changes: the classes are the jar's own.
     * If the archive cannot be made, the processes run without one. The JVM's own lines about the archive are off,
     * so that a process's output is the same with or without it.
     */
    private static final class ClassArchive {
        static final Path FILE = JAR.resolveSibling(JAR.getFileName() + ".jsa");
        static final List<String> QUIET = List.of("-Xlog:cds=off", "-Xlog:cds+dynamic=off");
        static final List<String> OPTIONS = options();

        private static List<String> options() {
            Path lock = JAR.resolveSibling(JAR.getFileName() + ".jsa.lock");
            try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
                channel.lock(); // released as the channel closes
                if (!Files.isRegularFile(FILE)
                        || Files.getLastModifiedTime(FILE).compareTo(Files.getLastModifiedTime(JAR)) < 0) {
                    make();
                }
            } catch (IOException | RuntimeException | AssertionError e) {
                System.out.println("ServerProcess: no class data sharing archive, the processes load every class from"
                        + " the jar: " + e);
                return List.of();
            }
            List<String> options = new ArrayList<>(List.of("-XX:SharedArchiveFile=" + FILE));
            options.addAll(QUIET);
            return options;
        }

        /** A {@code serve} process that answers gRPC and HTTP once, and writes the archive as it stops. */
        private static void make() throws IOException {
            Path dir = Files.createTempDirectory("sluice-class-archive");
            Path config = dir.resolve("archive.yaml");
            Path made = FILE.resolveSibling(FILE.getFileName() + ".new"); // beside it: moved in place at once
            Files.writeString(
                    config,
                    "domain: archive\ndescriptors:\n  - key: k\n    rate_limit: {unit: second, requests_per_unit: 5}\n");
            List<String> command = new ArrayList<>(JVM);
            command.add("-XX:ArchiveClassesAtExit=" + made);
            command.addAll(QUIET);
            command.addAll(List.of(
                    "-jar",
                    JAR.toString(),
                    "serve",
                    "--http-port",
                    "0",
                    "--grpc-port",
                    "0",
                    "--config",
                    dir.toString()));
            RateLimitRequest request = request("archive", descriptor("k", "v"));
            int status;
            try (ServerProcess p = ready(new ServerProcess("the class archive's serve", exec(Map.of(), command)))) {
                p.shouldRateLimit(request);
                p.post("/json", json(request));
                p.get("/metrics");
                p.get("/healthcheck");
                status = p.stop();
            } finally {
                Files.delete(config);
                Files.delete(dir);
            }
            if (status != 143 || !Files.isRegularFile(made)) { // 143: ended by SIGTERM, as a stopped serve is
                throw new IllegalStateException("the archive's serve exited with " + status + ", archive written: "
                        + Files.isRegularFile(made));
            }
            Files.move(made, FILE, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
    }

    private static ServerProcess ready(ServerProcess p) {
        try {
            Await.until(
                    "the ports of " + p.name + " (stdout: " + p.out + ", stderr: " + p.err + ")",
                    Await.GENEROUS,
                    () -> {
                        if (!p.process.isAlive() && (p.grpcPort < 0 || p.httpPort < 0)) {
                            throw new AssertionError(p.name + " exited with " + p.process.exitValue() + "; stdout: "
                                    + p.out + "; stderr: " + p.err);
                        }
                        return p.grpcPort > 0 && p.httpPort > 0;
                    });
        } catch (RuntimeException | Error e) {
            p.close();
            throw e;
        }
        p.channel = NettyChannelBuilder.forAddress("127.0.0.1", p.grpcPort)
                .usePlaintext()
                .build();
        return p;
    }

    static ServerProcess serve(String... args) {
        return serve(Map.of(), args);
    }

    /** A command that runs to its end: its exit status, standard output and standard error. */
    record Result(int status, String out, String err) {}

    static Result run(String... args) {
        ServerProcess p = start(Map.of(), List.of(args));
        try {
            if (!p.process.waitFor(60, TimeUnit.SECONDS)) {
                throw new AssertionError(p.name + " still running after 60 s");
            }
            // the pumps read both streams to their end, which the exit brings once they are drained; closing a stream
            // here, before that, cut off the lines not read yet (a replay's CSV lost its last hundred lines once)
            Await.until("the output of " + p.name, Await.GENEROUS, () -> p.pumped == 2);
            return new Result(p.process.exitValue(), String.join("\n", p.out), String.join("\n", p.err));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        } finally {
            p.close();
        }
    }

    private volatile int pumped;

    private static ServerProcess start(Map<String, String> env, List<String> args) {
        if (!Files.isRegularFile(JAR)) {
            throw new AssertionError(JAR.toAbsolutePath() + " is missing: the ITs run after 'mvn package'");
        }
        return new ServerProcess(String.join(" ", args), exec(env, javaJar(args.toArray(String[]::new))));
    }

    /** Starts {@code command} with {@code env} added to this JVM's environment, and kills it if this JVM exits. */
    private static Process exec(Map<String, String> env, List<String> command) {
        ProcessBuilder b = new ProcessBuilder(command);
        b.environment().remove("SLUICE_ADMIN_TOKEN");
        b.environment().keySet().removeAll(EnvSettings.names()); // envoyproxy/ratelimit's: only what a test sets
        b.environment().putAll(env);
        try {
            Process process = b.start();
            Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "sluice-server-kill"));
            return process;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    private void pump(InputStream in, List<String> lines, boolean stdout) {
        Thread t = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                        for (String line; (line = r.readLine()) != null; ) {
                            lines.add(line);
                            Matcher m = LISTENING.matcher(line);
                            if (stdout && m.find()) {
                                int port = Integer.parseInt(m.group(3));
                                switch (m.group(1)) {
                                    case "grpc" -> grpcPort = port;
                                    case "http" -> httpPort = port;
                                    default -> debugPort = port;
                                }
                            }
                        }
                    } catch (IOException e) {
                        // the process is gone
                    } finally {
                        synchronized (this) {
                            pumped++;
                        }
                    }
                },
                "sluice-server-output");
        t.setDaemon(true);
        t.start();
    }

    int httpPort() {
        return httpPort;
    }

    int grpcPort() {
        return grpcPort;
    }

    /** The debug port, once printed; -1 if none. */
    int debugPort() {
        return debugPort;
    }

    Process process() {
        return process;
    }

    List<String> stdout() {
        synchronized (out) {
            return List.copyOf(out);
        }
    }

    List<String> stderr() {
        synchronized (err) {
            return List.copyOf(err);
        }
    }

    ManagedChannel channel() {
        return channel;
    }

    RateLimitServiceGrpc.RateLimitServiceBlockingStub grpc() {
        return RateLimitServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
    }

    RateLimitResponse shouldRateLimit(RateLimitRequest request) {
        return grpc().shouldRateLimit(request);
    }

    HttpResponse<String> get(String path, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).GET();
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    HttpResponse<String> post(String path, String body, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.ofString(body));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return send(b.build());
    }

    /** {@link #post} over HTTP/2 (h2c); fails if the answer came over HTTP/1.1. */
    HttpResponse<String> postOverHttp2(String path, String body) {
        HttpResponse<String> r = send(
                HTTP2,
                HttpRequest.newBuilder(uri(path))
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build());
        if (r.version() != HttpClient.Version.HTTP_2) {
            throw new AssertionError("answered over " + r.version() + ", not HTTP/2: " + r.body());
        }
        return r;
    }

    HttpResponse<String> send(HttpRequest request) {
        return send(HTTP, request);
    }

    private static HttpResponse<String> send(HttpClient client, HttpRequest request) {
        try {
            return client.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException("HTTP " + request + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + httpPort + path);
    }

    /** Stops the process with SIGTERM, as an orchestrator does, and waits for it; kills it if it hangs. */
    int stop() {
        if (channel != null) {
            channel.shutdownNow();
        }
        process.toHandle().destroy(); // SIGTERM; unlike Process.destroy(), keeps its output readable to the end
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        return process.isAlive() ? -1 : process.exitValue();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            stop();
        } else if (channel != null) {
            channel.shutdownNow();
        }
    }

    @Override
    public String toString() {
        return name;
    }

    // ---- requests and answers, for the tests

    static RateLimitDescriptor descriptor(String... keysAndValues) {
        RateLimitDescriptor.Builder d = RateLimitDescriptor.newBuilder();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            d.addEntries(RateLimitDescriptor.Entry.newBuilder()
                    .setKey(keysAndValues[i])
                    .setValue(keysAndValues[i + 1]));
        }
        return d.build();
    }

    static RateLimitRequest request(String domain, RateLimitDescriptor... descriptors) {
        return RateLimitRequest.newBuilder()
                .setDomain(domain)
                .addAllDescriptors(List.of(descriptors))
                .build();
    }

    static String json(RateLimitRequest r) {
        try {
            return JsonFormat.printer().print(r);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }

    static RateLimitResponse parse(String json) {
        RateLimitResponse.Builder b = RateLimitResponse.newBuilder();
        try {
            JsonFormat.parser().merge(json, b);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError("not a RateLimitResponse: " + json, e);
        }
        return b.build();
    }
}
