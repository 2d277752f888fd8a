package dev.sluice.assembly;

import java.io.Serial;

/** A store URI that names no store this process can open, or is malformed. The message never carries a password. */
public final class StoreUriException extends IllegalArgumentException {

    @Serial
    private static final long serialVersionUID = 1L;

    private final String redactedUri;
    private final String reason;

    StoreUriException(String redactedUri, String reason) {
        super("store URI '" + redactedUri + "' is not valid: " + reason);
        this.redactedUri = redactedUri;
        this.reason = reason;
    }

    /** The URI, its password and tokens replaced by {@code ***} ({@link StoreAssembly#redact}). */
    public String redactedUri() {
        return redactedUri;
    }

    /** What is wrong and what is expected, without the URI. */
    public String reason() {
        return reason;
    }
}
