package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.testkit.ManualClock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The OAuth token endpoint of the Allegro write-up, as configuration: a default per client, a trusted client never
 * limited, an override with two limits, user grants per client and user. Then the same traffic in a global dry run:
 * nothing refused, and the "would deny" count of each client equals its denials when enforced.
 */
class AllegroCaseTest {

    static final String OAUTH =
            """
            domain: oauth-token
            descriptors:
              - key: client_id
                rate_limit: {unit: second, requests_per_unit: 50}
                descriptors:
                  - key: username
                    rate_limit: {unit: minute, requests_per_unit: 20}
              - key: client_id
                value: mobile-app
                rate_limit: {unlimited: true}
              - key: client_id
                value: big-partner
                rate_limits:
                  - {unit: second, requests_per_unit: 100}
                  - {unit: minute, requests_per_unit: 1500}
            """;

    /** One request of the traffic: a grant by a client, maybe for a user. */
    record Request(String grant, String client, String user) {
        String who() {
            return user == null ? client : client + "/" + user;
        }
    }

    /**
     * 20 seconds of traffic, per second: a quiet client at 30/s, a greedy one at 80/s, the trusted app at 500/s
     * (10x the default), the partner at 120/s, and password grants of one web client for alice (2/s) and bob (one
     * every 2 s).
     */
    static void traffic(ManualClock clock, java.util.function.Consumer<Request> send) {
        for (int second = 0; second < 20; second++) {
            for (int slot = 0; slot < 500; slot++) {
                if (slot < 30) {
                    send.accept(new Request("client_credentials", "quiet", null));
                }
                if (slot < 80) {
                    send.accept(new Request("client_credentials", "greedy", null));
                }
                send.accept(new Request("client_credentials", "mobile-app", null));
                if (slot < 120) {
                    send.accept(new Request("client_credentials", "big-partner", null));
                }
                if (slot < 2) {
                    send.accept(new Request("password", "web", "alice"));
                }
                if (slot == 0 && second % 2 == 0) {
                    send.accept(new Request("refresh_token", "web", "bob"));
                }
            }
            clock.advance(Duration.ofSeconds(1));
        }
    }

    static List<Descriptor> descriptors(Request r) {
        return OAuthDescriptors.forTokenRequest(r.grant(), r.client(), r.user());
    }

    @Test
    void enforcedThenDryRun() {
        Policies policies = Policies.parse("oauth.yaml", OAUTH);

        ManualClock clock = Clocks.atHourStart();
        PolicyLimiter enforce = PolicyLimiter.builder(policies).clock(clock).build();
        Map<String, Integer> denied = new TreeMap<>();
        Map<String, Integer> sent = new TreeMap<>();
        traffic(clock, r -> {
            sent.merge(r.who(), 1, Integer::sum);
            if (!enforce.check("oauth-token", descriptors(r), 1).allowed()) {
                denied.merge(r.who(), 1, Integer::sum);
            }
        });
        assertEquals(
                Map.of(
                        "quiet",
                        600,
                        "greedy",
                        1600,
                        "mobile-app",
                        10_000,
                        "big-partner",
                        2400,
                        "web/alice",
                        40,
                        "web/bob",
                        10),
                sent);
        // greedy: 30 over 50/s each second; big-partner: 20 a second over 100/s for 15 s, then the 1500 a minute
        // are spent and all 120 a second are refused; alice: 20 a minute allowed of 40.
        assertEquals(Map.of("greedy", 600, "big-partner", 15 * 20 + 5 * 120, "web/alice", 20), denied);

        ManualClock dryClock = Clocks.atHourStart();
        PolicyLimiter dryRun =
                PolicyLimiter.builder(policies).clock(dryClock).dryRun(true).build();
        Map<String, Integer> wouldDeny = new TreeMap<>();
        traffic(dryClock, r -> {
            Verdict v = dryRun.check("oauth-token", descriptors(r), 1);
            assertTrue(v.allowed(), () -> "dry run refused " + r);
            if (v.descriptor(0).outcome() == Outcome.WOULD_DENY) {
                wouldDeny.merge(r.who(), 1, Integer::sum);
            }
        });
        assertEquals(denied, wouldDeny);
    }

    @Test
    void theTrustedClientIsNeverLimitedAndNeverReachesTheStore() {
        ManualClock clock = Clocks.atHourStart();
        PolicyLimiter l = PolicyLimiter.builder(Policies.parse("oauth.yaml", OAUTH))
                .clock(clock)
                .build();
        for (int i = 0; i < 5000; i++) {
            Verdict v = l.check(
                    "oauth-token", OAuthDescriptors.forTokenRequest("client_credentials", "mobile-app", null), 1);
            assertEquals(Outcome.UNLIMITED, v.descriptor(0).outcome());
            assertEquals(Long.MAX_VALUE, v.remaining());
        }
    }
}
