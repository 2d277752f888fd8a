package dev.sluice.server;

/** A command line the program cannot run: an unknown option, a missing or bad value. Exit status 2. */
public final class UsageException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public UsageException(String message) {
        super(message);
    }
}
