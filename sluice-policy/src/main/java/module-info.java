/**
 * Sluice policies: rate limits as configuration. envoyproxy/ratelimit's YAML format (domains, nested descriptors,
 * {@code rate_limit}, {@code replaces}, {@code shadow_mode} …) with extensions (algorithms, any window, several limits
 * per rule, modes), enforced all or nothing on any Sluice store, with Micrometer metrics and reload without restart.
 * Entry points: {@link dev.sluice.policy.Policies} and {@link dev.sluice.policy.PolicyLimiter}.
 */
@SuppressWarnings({"requires-transitive-automatic", "requires-automatic"})
module dev.sluice.policy {
    requires static transitive org.jspecify;
    requires transitive dev.sluice;
    requires transitive micrometer.core;
    requires org.snakeyaml.engine.v2;

    exports dev.sluice.policy;
}
