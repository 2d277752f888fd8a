package dev.sluice.testkit.server;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * Just enough of the Redis protocol (RESP2) to start, configure and probe test servers without a client library:
 * one command per connection, or one {@code MONITOR} session.
 */
final class Resp {

    private static final int TIMEOUT_MILLIS = 5_000;

    private Resp() {}

    /**
     * Sends one command and returns its reply: a {@code String} for simple and bulk strings, a {@code Long} for
     * integers, a {@code List} for arrays, {@code null} for a null reply.
     *
     * @throws IOException if the server cannot be reached or answers with an error
     */
    static @Nullable Object call(String host, int port, String... command) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            send(socket.getOutputStream(), command);
            return read(new BufferedInputStream(socket.getInputStream()));
        }
    }

    /**
     * The commands the server runs while {@code action} runs, as {@code MONITOR} shows them, one line each: every
     * command of every client (and each {@code redis.call} of a script), read until the marker {@code ECHO} sent
     * once {@code action} returns, so none run before then is missed.
     */
    static List<String> monitor(String host, int port, Runnable action) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS * 6);
            send(socket.getOutputStream(), "MONITOR");
            InputStream in = new BufferedInputStream(socket.getInputStream());
            Object ok = read(in);
            if (!"OK".equals(ok)) {
                throw new IOException("MONITOR answered " + ok);
            }
            action.run();
            String marker = "sluice-monitor-" + UUID.randomUUID();
            call(host, port, "ECHO", marker);
            List<String> commands = new ArrayList<>();
            for (Object line; !String.valueOf(line = read(in)).contains(marker); ) {
                commands.add(String.valueOf(line));
            }
            return commands;
        }
    }

    private static void send(OutputStream out, String... command) throws IOException {
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.write(("*" + command.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String arg : command) {
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            request.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            request.write(bytes);
            request.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.write(request.toByteArray());
        out.flush();
    }

    private static @Nullable Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new IOException("Redis answered: " + line);
            case ':':
                return Long.parseLong(line);
            case '$': {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    return null;
                }
                byte[] bytes = in.readNBytes(length + 2);
                return new String(bytes, 0, length, StandardCharsets.UTF_8);
            }
            case '*': {
                int count = Integer.parseInt(line);
                if (count < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new IOException("not a Redis reply: type byte " + type);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("connection closed in the middle of a reply");
            }
            b.write(c);
        }
        in.read(); // '\n'
        return b.toString(StandardCharsets.UTF_8);
    }
}
