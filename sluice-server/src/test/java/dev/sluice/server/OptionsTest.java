package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.assembly.StoreAssembly;
import dev.sluice.assembly.StoreMode;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The command-line parser and the store URIs: every problem named with the option and the value. */
class OptionsTest {
    static Options parse(String... args) {
        return Options.parse("serve", List.of(args), Set.of("http-port", "sync-interval"), Set.of("help"));
    }

    @Test
    void valuesFlagsAndOperands() {
        Options o = parse("--http-port", "0", "--sync-interval=250ms", "--help", "x");
        assertEquals(0, o.port("http-port", 8080));
        assertEquals(Duration.ofMillis(250), o.duration("sync-interval"));
        assertTrue(o.flag("help"));
        assertEquals(List.of("x"), o.operands());
        assertEquals(8080, parse().port("http-port", 8080));
    }

    @Test
    void problemsNameTheOptionAndValue() {
        assertEquals(
                "serve: --http-port '70000' is not valid: expected a port number from 0 to 65535 (0: any free port)",
                assertThrows(UsageException.class, () -> parse("--http-port", "70000")
                                .port("http-port", 1))
                        .getMessage());
        assertEquals(
                "serve: --sync-interval '0s' is not valid: expected a positive duration such as 100ms, 1s, 5m or 1h",
                assertThrows(UsageException.class, () -> parse("--sync-interval", "0s")
                                .duration("sync-interval"))
                        .getMessage());
        assertEquals(
                "serve: unknown option '--htp-port' (see: sluice-server serve --help)",
                assertThrows(UsageException.class, () -> parse("--htp-port", "1"))
                        .getMessage());
        assertEquals(
                "serve: --http-port needs a value",
                assertThrows(UsageException.class, () -> parse("--http-port")).getMessage());
        assertEquals(
                "serve: --help takes no value, was given 'yes'",
                assertThrows(UsageException.class, () -> parse("--help=yes")).getMessage());
    }

    @Test
    void storeUrisAreCheckedAndPasswordsStayOutOfMessages() {
        // How a postgresql:// URI becomes a pool: PostgresStoreProviderTest (sluice-postgres).
        assertEquals("postgresql://app:***@h/d", StoreAssembly.redact("postgresql://app:secret@h/d"));
        UsageException e = assertThrows(
                UsageException.class,
                () -> Stores.open("postgresql://app:secret@h", Stores.Sharing.EXACT, Duration.ofMillis(15)));
        assertEquals(
                "serve: --store 'postgresql://app:***@h' is not valid: expected postgresql://user:password@host:port/database",
                e.getMessage());
        assertTrue(assertThrows(
                        UsageException.class,
                        () -> Stores.open("mongodb://h:1", Stores.Sharing.EXACT, Duration.ofMillis(15), 1))
                .getMessage()
                .contains("name the database"));
        assertEquals(
                "serve: --sync-interval needs a shared store, not memory:",
                assertThrows(
                                UsageException.class,
                                () -> Stores.open(
                                        "memory:",
                                        Stores.Sharing.of(Duration.ofMillis(100), null),
                                        Duration.ofMillis(15),
                                        1))
                        .getMessage());
        assertEquals(
                "serve: --lease-interval needs a shared store, not memory:",
                assertThrows(
                                UsageException.class,
                                () -> Stores.open(
                                        "memory:",
                                        Stores.Sharing.of(null, Duration.ofMillis(100)),
                                        Duration.ofMillis(15),
                                        1))
                        .getMessage());
    }

    @Test
    void synchronizedOrLeasedModeNotBoth() {
        assertEquals(Stores.Sharing.EXACT, Stores.Sharing.of(null, null));
        assertEquals(
                new Stores.Sharing(StoreMode.SYNCHRONIZED, Duration.ofMillis(100)),
                Stores.Sharing.of(Duration.ofMillis(100), null));
        assertEquals(
                new Stores.Sharing(StoreMode.LEASED, Duration.ofSeconds(1)),
                Stores.Sharing.of(null, Duration.ofSeconds(1)));
        assertEquals(
                "serve: give --sync-interval (synchronized mode) or --lease-interval (leased mode), not both",
                assertThrows(
                                UsageException.class,
                                () -> Stores.Sharing.of(Duration.ofMillis(100), Duration.ofMillis(100)))
                        .getMessage());
    }

    static Stores.Sharing sharing(java.io.ByteArrayOutputStream err, String... args) {
        Options o = Options.parse(
                "serve",
                List.of(args),
                Set.of("store-mode", "store-interval", "sync-interval", "lease-interval"),
                Set.of());
        return Stores.Sharing.parse(o, new java.io.PrintStream(err, true, java.nio.charset.StandardCharsets.UTF_8));
    }

    @Test
    void oneModeOptionAndOneIntervalNameWithTheOldOptionsAsDeprecatedAliases() {
        var err = new java.io.ByteArrayOutputStream();
        assertEquals(Stores.Sharing.EXACT, sharing(err));
        assertEquals(Stores.Sharing.EXACT, sharing(err, "--store-mode", "exact"));
        assertEquals(
                new Stores.Sharing(StoreMode.SYNCHRONIZED, Duration.ofMillis(250), "--store-mode synchronized"),
                sharing(err, "--store-mode", "synchronized", "--store-interval", "250ms"));
        assertEquals(
                new Stores.Sharing(StoreMode.LEASED, null, "--store-mode leased"),
                sharing(err, "--store-mode", "leased"));
        assertEquals("", err.toString(java.nio.charset.StandardCharsets.UTF_8), "no warning for the new options");

        assertEquals(
                new Stores.Sharing(StoreMode.LEASED, Duration.ofSeconds(1)), sharing(err, "--lease-interval", "1s"));
        assertEquals(
                "sluice: warning: --lease-interval is deprecated and goes in the next release: use --store-mode leased"
                        + " --store-interval 1s\n",
                err.toString(java.nio.charset.StandardCharsets.UTF_8));

        assertEquals(
                "serve: --store-mode 'sharded' is not valid: expected exact, synchronized or leased",
                assertThrows(UsageException.class, () -> sharing(err, "--store-mode", "sharded"))
                        .getMessage());
        assertEquals(
                "serve: --store-interval applies to --store-mode synchronized or leased, not exact",
                assertThrows(UsageException.class, () -> sharing(err, "--store-interval", "1s"))
                        .getMessage());
        assertEquals(
                "serve: give --sync-interval (deprecated) or --store-mode and --store-interval, not both",
                assertThrows(
                                UsageException.class,
                                () -> sharing(err, "--sync-interval", "1s", "--store-mode", "synchronized"))
                        .getMessage());
        assertEquals(
                "serve: --store-mode leased needs a shared store, not memory:",
                assertThrows(
                                UsageException.class,
                                () -> Stores.open(
                                        "memory:", sharing(err, "--store-mode", "leased"), Duration.ofMillis(15), 1))
                        .getMessage());
    }
}
