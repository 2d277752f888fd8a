package dev.sluice.spi;

import java.util.Set;

/**
 * Opens the stores of some URI schemes: what a store module declares ({@code provides dev.sluice.spi.StoreProvider},
 * and a {@code META-INF/services} entry for the class path) so that {@code dev.sluice.assembly.StoreAssembly} can
 * open a store from its URI without a compile-time dependency on the store. Implementations are stateless and
 * thread-safe, with a public no-argument constructor.
 */
public interface StoreProvider {

    /** The URI schemes this provider opens, lower case, e.g. {@code redis}, {@code rediss}, {@code redis-cluster}. */
    Set<String> schemes();

    /**
     * Opens a client on {@code uri}, whose scheme is one of {@link #schemes()}; the connection closes the client.
     *
     * @throws IllegalArgumentException if the URI is malformed: the message says what is expected and never
     *                                  repeats the URI (it may carry a password)
     */
    StoreConnection connect(String uri);
}
