package dev.sluice.server;

import dev.sluice.policy.Policies;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/** The example configuration {@code serve} runs without {@code --config}: the OAuth policy of the design. */
final class BuiltIn {
    static final String RESOURCE = "dev/sluice/server/oauth-token.yaml";

    private BuiltIn() {}

    static String text() {
        try (InputStream in = Objects.requireNonNull(
                BuiltIn.class.getClassLoader().getResourceAsStream(RESOURCE), "the jar lacks " + RESOURCE)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Policies policies() {
        return Policies.parse("built-in:oauth-token.yaml", text());
    }
}
