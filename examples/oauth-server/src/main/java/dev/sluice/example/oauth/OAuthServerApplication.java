package dev.sluice.example.oauth;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Spring Authorization Server whose token endpoint is rate-limited by Sluice as Allegro limits theirs: each client
 * on a limit of its own for {@code client_credentials}, each user of each client for {@code authorization_code} and
 * {@code refresh_token}, trusted clients never limited, rolled out in dry run first.
 *
 * <ul>
 *   <li>The limits: {@code config/oauth-token.yaml}, watched by the starter ({@code sluice.policies.location}).
 *   <li>The user of a code or refresh token: {@link RateLimitConfig} resolves it before the token endpoint runs.
 *   <li>Dry run by default; {@code --spring.profiles.active=enforce} refuses.
 * </ul>
 */
@SpringBootApplication
public class OAuthServerApplication {

    /** Runs the server (port 8080 unless {@code --server.port} says otherwise). */
    public static void main(String[] args) {
        SpringApplication.run(OAuthServerApplication.class, args);
    }
}
