/**
 * The store assembly: a store URI and a mode ({@link dev.sluice.assembly.StoreMode}) made into the store limiters
 * are bound to ({@link dev.sluice.assembly.StoreAssembly}). The rate-limit service and the Spring Boot starter
 * assemble their stores here; store modules plug in through {@link dev.sluice.spi.StoreProvider}.
 */
package dev.sluice.assembly;
