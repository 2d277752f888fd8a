package dev.sluice.bench;

import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The {@link KeyCursor} of the PostgreSQL and MongoDB benchmarks: a prime stride of 7,919, coprime with their key
 * counts (1 and 100,000). On one key every thread hits the same row.
 */
@State(Scope.Thread)
public class StoreKeyCursor extends KeyCursor {

    public StoreKeyCursor() {
        super(7_919);
    }
}
