package dev.sluice.assembly;

import java.io.Serial;
import java.util.Locale;

/** A mode the store cannot serve: synchronized or leased mode on a store that keeps its counts in this process only. */
public final class StoreModeException extends IllegalArgumentException {

    @Serial
    private static final long serialVersionUID = 1L;

    private final StoreMode mode;
    private final String store;

    StoreModeException(StoreMode mode, String store) {
        super(mode.name().toLowerCase(Locale.ROOT) + " mode needs a shared store, not " + store);
        this.mode = mode;
        this.store = store;
    }

    /** The mode asked for. */
    public StoreMode mode() {
        return mode;
    }

    /** The store, as {@link AssembledStore#description()} names it (e.g. {@code memory:}). */
    public String store() {
        return store;
    }
}
