/**
 * Sluice core: the rate limiter API ({@code dev.sluice}), the store SPI ({@code dev.sluice.spi}), the in-memory
 * store ({@code dev.sluice.memory}), synchronized mode ({@code dev.sluice.sync}) and leased mode ({@code dev.sluice.lease}), and the store
 * assembly ({@code dev.sluice.assembly}) that opens a store from its URI in a mode. No runtime dependencies.
 */
module dev.sluice {
    requires static transitive org.jspecify;

    exports dev.sluice;
    exports dev.sluice.spi;
    exports dev.sluice.memory;
    exports dev.sluice.sync;
    exports dev.sluice.lease;
    exports dev.sluice.assembly;

    uses dev.sluice.spi.StoreProvider;
}
