package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import dev.sluice.policy.Descriptor;
import dev.sluice.policy.Mode;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyException;
import dev.sluice.policy.Rule;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** xDS {@code RateLimitConfig} resources read as the files envoyproxy/ratelimit would write for them. */
class RateLimitConfigsTest {

    static String limits(Policies p, String domain, Descriptor d) {
        return p.match(domain, d).map(Rule::limits).map(Object::toString).orElse("none");
    }

    @Test
    void everyFieldMeansWhatTheFileFormatSays() {
        Policies p = RateLimitConfigs.policies(List.of(
                RlsConf.config(
                        "edge",
                        "edge",
                        RlsConf.descriptor(
                                "client_id",
                                "",
                                RlsConf.limit(RlsConf.SECOND, 50),
                                RlsConf.descriptor("username", "", RlsConf.limit(RlsConf.MINUTE, 20))),
                        RlsConf.descriptor("client_id", "mobile-app", RlsConf.unlimited()),
                        RlsConf.descriptor("path", "/login", null),
                        RlsConf.descriptor("week", "", RlsConf.named(RlsConf.WEEK, 7, "weekly")),
                        RlsConf.flagged("shadowed", RlsConf.limit(RlsConf.HOUR, 3), true, false)),
                RlsConf.config("other", "other", RlsConf.descriptor("k", "", RlsConf.limit(RlsConf.HOUR, 4)))));

        assertEquals(Set.of("edge", "other"), p.domains());
        assertEquals("[50/second fixed_window]", limits(p, "edge", Descriptor.of("client_id", "abc")));
        assertEquals(
                "[20/minute fixed_window]", limits(p, "edge", Descriptor.of("client_id", "abc", "username", "bob")));
        assertEquals("[unlimited]", limits(p, "edge", Descriptor.of("client_id", "mobile-app")));
        assertEquals("none", limits(p, "edge", Descriptor.of("path", "/login")), "no rate_limit: let through");
        assertEquals("[7/week fixed_window (weekly)]", limits(p, "edge", Descriptor.of("week", "w")));
        Rule shadowed = p.match("edge", Descriptor.of("shadowed", "x")).orElseThrow();
        assertEquals(Mode.DRY_RUN, shadowed.mode(), "shadow_mode: true");
        assertEquals("[4/hour fixed_window]", limits(p, "other", Descriptor.of("k", "v")));
        assertTrue(shadowed.source().startsWith("xds:edge"), shadowed.source());
    }

    @Test
    void aStringOfAnyCharacterIsReadAsItCame() {
        String odd = "v\"\\\n\u0000\u0085\u2028\ufeff\ufffe\uffff\ud83d\ude00";
        Policies p = RateLimitConfigs.policies(List.of(RlsConf.config(
                "d" + odd, "d" + odd, RlsConf.descriptor("k" + odd, odd, RlsConf.limit(RlsConf.SECOND, 5)))));
        assertEquals(Set.of("d" + odd), p.domains());
        assertEquals("[5/second fixed_window]", limits(p, "d" + odd, Descriptor.of("k" + odd, odd)));
    }

    @Test
    void replacesNamesTheLimitsItDrops() {
        Policies p = RateLimitConfigs.policies(List.of(RlsConf.config(
                "d",
                "d",
                RlsConf.descriptor("a", "", RlsConf.named(RlsConf.SECOND, 5, "first")),
                RlsConf.descriptor("b", "", RlsConf.named(RlsConf.SECOND, 9, "second", "first")))));
        assertEquals("[9/second fixed_window (second)]", limits(p, "d", Descriptor.of("b", "x")));
    }

    @Test
    void aResourceTheParserRefusesIsRefusedNamingTheResourceAndTheField() {
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> RateLimitConfigs.policies(List.of(
                        RlsConf.config("good", "good", RlsConf.descriptor("k", "", RlsConf.limit(RlsConf.HOUR, 1))),
                        RlsConf.config("no-unit", "bad", RlsConf.descriptor("k", "", RlsConf.limit(0, 5))))));
        assertEquals(1, e.errors().size(), e.getMessage());
        assertEquals("xds:no-unit", e.errors().get(0).file());
        assertTrue(e.errors().get(0).field().contains("unit"), e.getMessage());
    }

    @Test
    void aDomainInTwoResourcesIsRefused() {
        PolicyException e = assertThrows(
                PolicyException.class,
                () -> RateLimitConfigs.policies(List.of(
                        RlsConf.config("one", "same", RlsConf.descriptor("k", "", RlsConf.limit(RlsConf.HOUR, 1))),
                        RlsConf.config("two", "same", RlsConf.descriptor("k", "", RlsConf.limit(RlsConf.HOUR, 2))))));
        assertTrue(e.getMessage().contains("duplicate domain 'same'"), e.getMessage());
    }

    @Test
    void aResourceOfAnotherTypeOrThatDoesNotDecodeIsRefused() {
        Any other = Any.newBuilder()
                .setTypeUrl("type.googleapis.com/envoy.config.cluster.v3.Cluster")
                .build();
        Any garbage = Any.newBuilder()
                .setTypeUrl(RlsConf.TYPE_URL)
                .setValue(ByteString.copyFrom(new byte[] {(byte) 0x0a, (byte) 0xff}))
                .build();
        PolicyException e =
                assertThrows(PolicyException.class, () -> RateLimitConfigs.policies(List.of(other, garbage)));
        assertEquals(2, e.errors().size(), e.getMessage());
        assertTrue(e.errors().get(0).message().contains("envoy.config.cluster.v3.Cluster"), e.getMessage());
        assertTrue(e.errors().get(1).message().startsWith("not a RateLimitConfig"), e.getMessage());
    }

    @Test
    void keysAndValuesAreQuotedWhateverTheyHold() {
        String odd = "a\"b\\c\nd: e, [f] {g} #h \u0001 \u2028 *";
        Policies p = RateLimitConfigs.policies(List.of(
                RlsConf.config("odd", "dom\"ain", RlsConf.descriptor("k\"ey", odd, RlsConf.limit(RlsConf.SECOND, 1)))));
        assertEquals("[1/second fixed_window]", limits(p, "dom\"ain", Descriptor.of("k\"ey", odd)));
    }

    @Test
    void noResourceIsNoDomain() {
        assertEquals(Set.of(), RateLimitConfigs.policies(List.of()).domains());
    }
}
