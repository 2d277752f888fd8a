/**
 * Sluice core: the rate limiter API ({@code dev.sluice}), the store SPI ({@code dev.sluice.spi})
 * and the in-memory store ({@code dev.sluice.memory}). No runtime dependencies.
 */
module dev.sluice {
    exports dev.sluice;
    exports dev.sluice.spi;
    exports dev.sluice.memory;
}
