/**
 * Sluice core: the rate limiter API ({@code dev.sluice}), the store SPI ({@code dev.sluice.spi}), the in-memory
 * store ({@code dev.sluice.memory}), synchronized mode ({@code dev.sluice.sync}) and leased mode ({@code dev.sluice.lease}). No runtime dependencies.
 */
module dev.sluice {
    requires static transitive org.jspecify;

    exports dev.sluice;
    exports dev.sluice.spi;
    exports dev.sluice.memory;
    exports dev.sluice.sync;
    exports dev.sluice.lease;
}
