package dev.sluice.testkit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@code main} class run in a new JVM, as a service instance starts: nothing loaded, nothing connected, nothing
 * warmed up. The new JVM gets the test's class path, so it runs the code under test and the test's own classes.
 *
 * <pre>{@code
 * FreshJvm jvm = FreshJvm.start(SixCalls.class, redisUri, key);
 * List<String> out = jvm.await(Await.GENEROUS); // its standard output, line by line, once it exited with 0
 * }</pre>
 *
 * <p>A JVM that runs on after reporting, as a service instance does, is read while it runs ({@link #awaitLine}) and
 * killed as a crash would ({@link #kill}).
 */
public final class FreshJvm {

    private final String name;
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>(); // standard output so far
    private final CompletableFuture<String> out;
    private final CompletableFuture<String> err;

    private FreshJvm(String name, Process process) {
        this.name = name;
        this.process = process;
        this.out = drainLines(process.getInputStream(), lines);
        this.err = drainLines(process.getErrorStream(), new ArrayList<>());
    }

    /** Starts {@code main} with {@code args} in a new JVM and returns at once; the JVM is killed if the test's exits. */
    public static FreshJvm start(Class<?> main, String... args) {
        Objects.requireNonNull(main, "main must not be null");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(Arrays.asList(args));
        try {
            Process p = new ProcessBuilder(command).start();
            Runtime.getRuntime().addShutdownHook(new Thread(p::destroyForcibly, "sluice-fresh-jvm-kill"));
            return new FreshJvm(main.getSimpleName() + " " + String.join(" ", args), p);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start a JVM for " + main.getName(), e);
        }
    }

    /**
     * Waits for the JVM to exit and returns its standard output, line by line; throws an {@link AssertionError} with
     * its standard error if it exits with another status than 0 or is still running after {@code bound} (then it is
     * killed).
     */
    public List<String> await(Duration bound) {
        try {
            if (!process.waitFor(bound.toNanos(), TimeUnit.NANOSECONDS)) {
                process.destroyForcibly();
                throw new AssertionError(name + " still running after " + bound + "; its output: " + text(out)
                        + "; its errors: " + text(err));
            }
            String stdout = out.get(bound.toNanos(), TimeUnit.NANOSECONDS);
            if (process.exitValue() != 0) {
                throw new AssertionError(name + " exited with " + process.exitValue() + "; its output: " + stdout
                        + "; its errors: " + text(err));
            }
            return stdout.lines().toList();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new AssertionError("interrupted while waiting for " + name, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new AssertionError("cannot read the output of " + name, e);
        }
    }

    /**
     * Waits for the first line of the JVM's standard output that starts with {@code prefix}, while it runs, and
     * returns it; throws an {@link AssertionError} with what it wrote if there is none after {@code bound}, or if the
     * JVM exits without writing one.
     */
    public String awaitLine(String prefix, Duration bound) {
        Objects.requireNonNull(prefix, "prefix must not be null");
        String[] found = new String[1];
        Await.until("a line '" + prefix + "...' from " + name, bound, () -> {
            boolean exited = !process.isAlive();
            for (String line : lines) {
                if (line.startsWith(prefix)) {
                    found[0] = line;
                    return true;
                }
            }
            if (exited && out.isDone()) {
                throw new AssertionError(name + " exited with " + process.exitValue() + " without a line '" + prefix
                        + "...'; its output: " + lines + "; its errors: " + text(err));
            }
            return false;
        });
        return found[0];
    }

    /** The JVM's process id. */
    public long pid() {
        return process.pid();
    }

    /**
     * Kills the JVM at once if it still runs ({@code SIGKILL} on Unix: no shutdown hook, no {@code finally}, nothing
     * closed), and waits until it has exited, up to {@code bound}.
     */
    public void kill(Duration bound) {
        process.destroyForcibly();
        try {
            if (!process.waitFor(bound.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new AssertionError(name + " still running " + bound + " after it was killed");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting for " + name + " to die", e);
        }
    }

    private static String text(CompletableFuture<String> f) {
        return f.getNow("(not read yet)");
    }

    /** Reads {@code in} to its end on a thread of its own, adding each line to {@code lines} as it comes; the whole text when done. */
    private static CompletableFuture<String> drainLines(InputStream in, List<String> lines) {
        CompletableFuture<String> text = new CompletableFuture<>();
        Thread t = new Thread(
                () -> {
                    try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                        for (String line = r.readLine(); line != null; line = r.readLine()) {
                            lines.add(line);
                        }
                        text.complete(String.join("\n", lines));
                    } catch (IOException | RuntimeException e) {
                        text.completeExceptionally(e);
                    }
                },
                "sluice-fresh-jvm-drain");
        t.setDaemon(true);
        t.start();
        return text;
    }
}
