package dev.sluice.postgres;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.SluiceException;
import dev.sluice.spi.CounterKey;
import dev.sluice.spi.CounterSnapshot;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterWrite;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The counter table and its function: created by the builder, by hand, or again when lost; names validated. */
class CounterSchemaTest {

    private static final long FRAME = 1_767_268_800_000_000_000L;

    private final DataSource dataSource = Databases.shared();
    private final String table =
            "sluice_cschema_" + UUID.randomUUID().toString().substring(0, 8);
    private final CounterKey key = new CounterKey("fw:60000000000", "k");

    @AfterEach
    void dropTable() throws SQLException {
        Databases.execute(
                dataSource,
                "DROP TABLE IF EXISTS " + table + "; DROP FUNCTION IF EXISTS " + table
                        + "_cas; DROP TABLE IF EXISTS sluice_s." + table + "; DROP FUNCTION IF EXISTS sluice_s." + table
                        + "_cas");
    }

    private PostgresStore.CounterStoreBuilder builder() {
        return PostgresStore.counterStoreBuilder(dataSource).table(table).timeout(Databases.PATIENCE);
    }

    private static CounterWrite create(CounterKey key, long version, long count) {
        return new CounterWrite(key, CounterSnapshot.ABSENT, version, Map.of(FRAME, count), Long.MAX_VALUE);
    }

    @Test
    void aLostTableOrFunctionIsCreatedAgainByTheCallThatMissesIt() throws SQLException {
        CounterStore store = builder().build();
        assertArrayEquals(new boolean[] {true}, store.compareAndSet(List.of(create(key, 1, 1))));
        Databases.execute(dataSource, "DROP FUNCTION " + table + "_cas");
        CounterKey other = new CounterKey("fw:60000000000", "other");
        assertArrayEquals(new boolean[] {true}, store.compareAndSet(List.of(create(other, 2, 2))));
        assertEquals(
                List.of(new CounterSnapshot(1, Map.of(FRAME, 1L)), new CounterSnapshot(2, Map.of(FRAME, 2L))),
                store.load(List.of(key, other)),
                "the table kept its records");

        Databases.execute(dataSource, "DROP TABLE " + table);
        assertEquals(List.of(CounterSnapshot.absent()), store.load(List.of(key)), "a new, empty table");
        assertArrayEquals(new boolean[] {true}, store.compareAndSet(List.of(create(key, 3, 3))));
        assertEquals(1, Databases.queryLong(dataSource, "SELECT count(*) FROM " + table));
    }

    @Test
    void withoutCreateSchemaTheScriptIsRunByHand() throws SQLException {
        PostgresStore.CounterStoreBuilder builder = builder().createSchema(false);
        CounterStore store = builder.build();
        assertEquals(
                0,
                Databases.queryLong(dataSource, "SELECT count(*) FROM pg_class WHERE relname = '" + table + "'"),
                "build() created nothing");
        SluiceException e = assertThrows(SluiceException.class, () -> store.load(List.of(key)));
        assertTrue(
                e.getMessage()
                        .startsWith("PostgreSQL failed reading 1 counter records (fw:60000000000 'k') in " + table),
                e.getMessage());
        e = assertThrows(SluiceException.class, () -> store.compareAndSet(List.of(create(key, 1, 1))));
        assertTrue(e.getMessage().contains("whether they were applied is unknown"), e.getMessage());

        Databases.execute(dataSource, builder.schemaScript());
        Databases.execute(dataSource, builder.schemaScript()); // idempotent
        assertArrayEquals(new boolean[] {true}, store.compareAndSet(List.of(create(key, 1, 1))));
        assertEquals(1, store.load(List.of(key)).get(0).total());
    }

    @Test
    void aSchemaQualifiesTheTableAndFunction() throws SQLException {
        Databases.execute(dataSource, "CREATE SCHEMA IF NOT EXISTS sluice_s");
        CounterStore store = builder().schema("sluice_s").build();
        assertTrue(store.toString().contains("sluice_s." + table), store.toString());
        assertArrayEquals(new boolean[] {true}, store.compareAndSet(List.of(create(key, 1, 1))));
        assertEquals(1, Databases.queryLong(dataSource, "SELECT count(*) FROM sluice_s." + table));
        assertEquals(
                1,
                Databases.queryLong(
                        dataSource,
                        "SELECT count(*) FROM pg_proc WHERE proname = '" + table
                                + "_cas' AND pronamespace = 'sluice_s'::regnamespace"));
        assertEquals(
                0,
                Databases.queryLong(
                        dataSource,
                        "SELECT count(*) FROM pg_class WHERE relname = '" + table
                                + "' AND relnamespace = 'public'::regnamespace"));
    }

    @Test
    void badArgumentsAreRefusedByName() {
        PostgresStore.CounterStoreBuilder b = PostgresStore.counterStoreBuilder(dataSource);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.table("Counts; DROP"));
        assertTrue(e.getMessage().contains("'Counts; DROP'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> b.schema(""));
        assertTrue(e.getMessage().startsWith("schema must be"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> b.timeout(Duration.ZERO));
        assertEquals("timeout must be > 0, was 0s", e.getMessage());
        assertThrows(NullPointerException.class, () -> PostgresStore.counterStoreBuilder(null));

        CounterStore store = builder().build();
        CounterWrite w = create(key, 1, 1);
        e = assertThrows(IllegalArgumentException.class, () -> store.compareAndSet(List.of(w, create(key, 2, 2))));
        assertTrue(e.getMessage().contains("written twice in one batch, at 0 and 1"), e.getMessage());
        assertEquals(0, store.compareAndSet(List.of()).length);
        assertEquals(List.of(), store.load(List.of()));
    }

    @Test
    void defaults() {
        assertEquals("sluice_counter", PostgresStore.DEFAULT_COUNTER_TABLE);
        assertEquals(Duration.ofSeconds(1), dev.sluice.spi.CounterStoreBuilder.DEFAULT_TIMEOUT);
        assertTrue(PostgresStore.counterStoreBuilder(dataSource)
                .schemaScript()
                .contains("CREATE TABLE IF NOT EXISTS sluice_counter ("));
    }
}
