package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** A {@code postgresql://} store URI becomes a pool; the password goes to the pool, not into the JDBC URL. */
class PostgresStoreProviderTest {

    @Test
    void postgresUrisBecomeAPoolAndPasswordsStayOutOfMessages() {
        var c = PostgresStoreProvider.Pool.config("postgresql://app:p%40ss@db.example:6432/limits?sslmode=require");
        assertEquals("jdbc:postgresql://db.example:6432/limits?sslmode=require", c.getJdbcUrl());
        assertEquals("app", c.getUsername());
        assertEquals("p@ss", c.getPassword());
        assertEquals(
                "jdbc:postgresql://h:5432/d",
                PostgresStoreProvider.Pool.config("postgresql://h/d").getJdbcUrl());
        assertEquals(
                "expected postgresql://user:password@host:port/database",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> PostgresStoreProvider.Pool.config("postgresql://app:secret@h"))
                        .getMessage());
    }
}
