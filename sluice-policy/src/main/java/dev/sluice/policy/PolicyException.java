package dev.sluice.policy;

import java.util.List;
import java.util.Objects;

/**
 * A configuration that cannot be loaded: every problem found, each with its file, line, column and field. Thrown by
 * {@link Policies#load(java.nio.file.Path)}; nothing of a refused configuration is ever used.
 */
public final class PolicyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Guarded by immutability: a {@link List#copyOf} of records. */
    private final transient List<PolicyError> errors;

    /**
     * An exception listing {@code errors}.
     *
     * @throws IllegalArgumentException if {@code errors} is empty
     */
    public PolicyException(List<PolicyError> errors) {
        super(message(errors));
        this.errors = List.copyOf(errors);
    }

    private static String message(List<PolicyError> errors) {
        Objects.requireNonNull(errors, "errors must not be null");
        if (errors.isEmpty()) {
            throw new IllegalArgumentException("a PolicyException has at least one error, was none");
        }
        StringBuilder sb = new StringBuilder();
        sb.append(errors.size() == 1 ? "1 error" : errors.size() + " errors").append(" in rate limit policies:");
        for (PolicyError e : errors) {
            sb.append("\n  ").append(e);
        }
        return sb.toString();
    }

    /** Every problem found, in file order. */
    public List<PolicyError> errors() {
        return errors;
    }
}
