/**
 * The store contract suite ({@code dev.sluice.testkit}) that every store's tests extend, the behaviour suite every
 * front door runs, and the real servers those tests start ({@code dev.sluice.testkit.server}).
 */
module dev.sluice.testkit {
    requires static transitive org.jspecify;
    requires transitive dev.sluice;
    requires transitive org.junit.jupiter.api;
    requires org.junit.jupiter.params;
    requires java.logging;
    requires java.net.http;

    exports dev.sluice.testkit;
    exports dev.sluice.testkit.server;
}
