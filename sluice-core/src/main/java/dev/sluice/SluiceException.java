package dev.sluice;

/**
 * The one unchecked exception Sluice throws for failures that are not the caller's bad arguments, such as a
 * store that cannot be reached. A rejection is never an exception: it is a {@link Decision}.
 */
public class SluiceException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** A failure with no underlying exception; {@code message} says what failed. */
    public SluiceException(String message) {
        super(message);
    }

    /** A failure caused by {@code cause}, typically a store driver's exception, which it wraps. */
    public SluiceException(String message, Throwable cause) {
        super(message, cause);
    }
}
