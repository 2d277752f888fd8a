@SuppressWarnings({"requires-transitive-automatic", "requires-automatic"})
module dev.sluice.redis {
    requires transitive dev.sluice;
    requires transitive lettuce.core;
    exports dev.sluice.redis;
}
