/**
 * Shared limits on PostgreSQL (JDBC): {@link dev.sluice.postgres.PostgresStore}. Needs a JDBC driver for PostgreSQL
 * behind the {@link javax.sql.DataSource} it is given.
 */
module dev.sluice.postgres {
    requires static transitive org.jspecify;
    requires transitive dev.sluice;
    requires transitive java.sql;
    requires static com.zaxxer.hikari;

    exports dev.sluice.postgres;

    provides dev.sluice.spi.StoreProvider with
            dev.sluice.postgres.PostgresStoreProvider;
}
