package dev.sluice.policy;

import java.util.Objects;

/**
 * One problem of a configuration file: where it is, which field, and what was expected.
 *
 * @param file    the file (or source name) the problem is in
 * @param line    1-based line; 0 when the problem has no position (a file that cannot be read)
 * @param column  1-based column; 0 when the problem has no position
 * @param field   the field, as a path from the file's root: {@code descriptors[1].rate_limit.unit}; empty for the
 *                file as a whole
 * @param message what is wrong and what is expected
 */
public record PolicyError(String file, int line, int column, String field, String message) {

    /** Requires every text to be non-null. */
    public PolicyError {
        Objects.requireNonNull(file, "file must not be null");
        Objects.requireNonNull(field, "field must not be null");
        Objects.requireNonNull(message, "message must not be null");
    }

    /** {@code file:line:column: field: message}, the form compilers use, so editors can jump to it. */
    @Override
    public String toString() {
        return file + ":" + line + ":" + column + ": " + (field.isEmpty() ? "" : field + ": ") + message;
    }
}
