package dev.sluice.bench.redis;

import dev.sluice.bench.KeyCursor;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * The Redis benchmarks' {@link KeyCursor}: a stride of one, every index in turn. On one key every thread hits the
 * same key: the hot key.
 */
@State(Scope.Thread)
public class Cursor extends KeyCursor {

    public Cursor() {
        super(1);
    }
}
