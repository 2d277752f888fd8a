package dev.sluice;

/**
 * The one unchecked exception Sluice throws for failures that are not the caller's bad arguments, such as a
 * store that cannot be reached. A rejection is never an exception: it is a {@link Decision}.
 */
public class SluiceException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public SluiceException(String message) {
        super(message);
    }

    public SluiceException(String message, Throwable cause) {
        super(message, cause);
    }
}
