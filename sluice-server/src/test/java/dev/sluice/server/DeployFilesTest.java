package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The deployment files of {@code deploy/} agree with the service: the image's environment is read as the ports and
 * runtime directory the manifests use, and the manifests' ports and probes are the service's. No container or cluster
 * runs here; this reads the files.
 */
class DeployFilesTest {
    static final Path DEPLOY = Path.of("../deploy");

    /** The environment the image sets ({@code ENV} of {@code deploy/Containerfile}), in its order. */
    static Map<String, String> imageEnvironment() throws IOException {
        String containerfile = Files.readString(DEPLOY.resolve("Containerfile"));
        Map<String, String> env = new LinkedHashMap<>();
        Matcher m = Pattern.compile("([A-Z_]+)=(\"[^\"]*\"|\\S+)")
                .matcher(
                        containerfile.substring(containerfile.indexOf("\nENV ")).split("\nUSER ")[0]);
        while (m.find()) {
            String value = m.group(2);
            env.put(m.group(1), value.startsWith("\"") ? value.substring(1, value.length() - 1) : value);
        }
        return env;
    }

    @Test
    void theImageServesOnEnvoyproxyRatelimitsPorts() throws IOException {
        String containerfile = Files.readString(DEPLOY.resolve("Containerfile"));
        assertTrue(containerfile.contains("\nEXPOSE 8080 8081 6070\n"), containerfile);
        assertTrue(containerfile.contains("\nENTRYPOINT [\"/bin/ratelimit\"]\n"), containerfile);
        assertTrue(containerfile.contains("\nUSER 65532:65532\n"), containerfile);
        Map<String, String> env = imageEnvironment();
        env.remove("JAVA_OPTS");
        assertEquals(
                List.of(
                        "--http-port=8080",
                        "--debug-port=6070",
                        "--grpc-port=8081",
                        "--bind=0.0.0.0",
                        "--config=/srv/runtime_data/current/config"),
                EnvSettings.read(env).args());
        String entrypoint = Files.readString(DEPLOY.resolve("ratelimit"));
        assertTrue(entrypoint.contains("-jar \"${SLUICE_JAR:-/opt/sluice/sluice-server.jar}\" serve \"$@\""));
        assertTrue(containerfile.contains("COPY --from=build /sluice-server.jar /opt/sluice/sluice-server.jar"));
    }

    @Test
    void theManifestsProbeAndExposeTheServicesPorts() throws IOException {
        Map<String, Map<String, Object>> byKind = new LinkedHashMap<>();
        for (Object doc : new Load(LoadSettings.builder().build())
                .loadAllFromString(Files.readString(DEPLOY.resolve("kubernetes/sluice.yaml")))) {
            Map<String, Object> m = map(doc);
            byKind.put((String) m.get("kind"), m);
        }
        assertEquals(
                List.of("ConfigMap", "Deployment", "PodDisruptionBudget", "Service"), List.copyOf(byKind.keySet()));
        Map<String, Object> container = map(list(at(byKind.get("Deployment"), "spec", "template", "spec", "containers"))
                .get(0));
        List<Object> ports = new ArrayList<>();
        for (Object p : list(container.get("ports"))) {
            ports.add(map(p).get("containerPort"));
        }
        assertEquals(List.of(8080, 8081, 6070), ports);
        assertEquals("/healthcheck", at(container, "readinessProbe", "httpGet", "path"));
        assertEquals(8080, at(container, "readinessProbe", "httpGet", "port"));
        assertEquals(8081, at(container, "livenessProbe", "grpc", "port"));
        assertEquals(
                "/data/ratelimit/config",
                map(list(container.get("volumeMounts")).get(0)).get("mountPath"));
        List<Object> servicePorts = new ArrayList<>();
        for (Object p : list(at(byKind.get("Service"), "spec", "ports"))) {
            servicePorts.add(map(p).get("port"));
        }
        assertEquals(List.of(8080, 8081, 6070), servicePorts);
        Map<String, String> env = new LinkedHashMap<>();
        for (Object e : list(container.get("env"))) {
            env.put((String) map(e).get("name"), (String) map(e).get("value"));
        }
        assertTrue(EnvSettings.read(env).args().contains("--config=/data/ratelimit/config"), env.toString());
    }

    @Test
    void theChartKeepsTheSamePortsAndProbes() throws IOException {
        Load load = new Load(LoadSettings.builder().build());
        Map<String, Object> values =
                map(load.loadFromString(Files.readString(DEPLOY.resolve("helm/sluice/values.yaml"))));
        assertTrue(
                values.keySet().containsAll(List.of("image", "replicas", "redis", "serviceMonitor", "prometheus")),
                values.toString());
        assertEquals(
                "sluice",
                map(load.loadFromString(Files.readString(DEPLOY.resolve("helm/sluice/Chart.yaml"))))
                        .get("name"));
        String deployment = Files.readString(DEPLOY.resolve("helm/sluice/templates/deployment.yaml"));
        for (String line : List.of(
                "containerPort: 8080",
                "containerPort: 8081",
                "containerPort: 6070",
                "path: /healthcheck",
                "mountPath: /data/ratelimit/config")) {
            assertTrue(deployment.contains(line), line);
        }
        String service = Files.readString(DEPLOY.resolve("helm/sluice/templates/service.yaml"));
        for (String line : List.of("port: 8080", "port: 8081", "port: 6070")) {
            assertTrue(service.contains(line), line);
        }
        // the Prometheus listener: the variables serve maps to it, its port in the container and the Service
        for (String line : List.of(
                "name: USE_PROMETHEUS",
                "name: PROMETHEUS_ADDR",
                "value: \":{{ .Values.prometheus.port }}\"",
                "containerPort: {{ .Values.prometheus.port }}")) {
            assertTrue(deployment.contains(line), line);
        }
        assertTrue(service.contains("port: {{ .Values.prometheus.port }}"), service);
        assertEquals(
                List.of("--prometheus-addr=:19001"),
                EnvSettings.read(Map.of(
                                "USE_PROMETHEUS", "true", "PROMETHEUS_ADDR", ":" + at(values, "prometheus", "port")))
                        .args());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }

    @SuppressWarnings("unchecked")
    private static List<Object> list(Object o) {
        return (List<Object>) o;
    }

    private static Object at(Map<String, Object> m, String... path) {
        Object o = m;
        for (String key : path) {
            o = map(o).get(key);
        }
        return o;
    }
}
