/**
 * Sluice for Spring Boot 3: {@link dev.sluice.spring.boot.SluiceAutoConfiguration} sets up a
 * {@link dev.sluice.policy.PolicyLimiter} from the {@code sluice.*} properties ({@link
 * dev.sluice.spring.boot.SluiceProperties}), registers the {@link dev.sluice.http.SluiceFilter}, binds the metrics to
 * the application's meter registry, watches the policies' location and shows them at the {@code sluice} Actuator
 * endpoint. The stores' modules, Actuator and the servlet API are optional: each part is set up only when its classes
 * are there.
 */
@SuppressWarnings({"requires-transitive-automatic", "requires-automatic"})
module dev.sluice.spring.boot {
    requires static transitive org.jspecify;
    requires transitive dev.sluice.http;
    requires transitive spring.boot;
    requires transitive spring.boot.autoconfigure;
    requires transitive spring.beans;
    requires transitive spring.context;
    requires spring.core;
    requires static transitive spring.boot.actuator;
    requires static transitive spring.boot.actuator.autoconfigure;
    requires static transitive dev.sluice.redis;
    requires static transitive dev.sluice.postgres;
    requires static transitive dev.sluice.mongodb;

    exports dev.sluice.spring.boot;

    // Spring creates the configuration classes and reads their annotations reflectively.
    opens dev.sluice.spring.boot to
            spring.core,
            spring.beans,
            spring.context;
}
