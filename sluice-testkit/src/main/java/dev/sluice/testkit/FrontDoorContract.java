package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.assembly.StoreMode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The behaviour every front door of the policy engine must show alike, written once: the rate-limit service's gRPC
 * and {@code /json}, the Servlet filter in a servlet container, and the Spring Boot starter each run these scenarios
 * through a thin adapter ({@link FrontDoor}) and must give the same answers: allowed or refused, each limit's quota,
 * remaining count and reset, the {@code RateLimit-Policy} and {@code RateLimit} fields, dry run and shadow ban, a
 * request of mixed costs decided all or nothing, a store that is down answered by each domain's
 * {@code on_store_failure} in every mode, and the same meters counting the same.
 *
 * <p>A subclass starts its front door once for the class, with {@link #POLICIES}, over a store that answers (for
 * {@link #doors()}) and over one shared store in each {@link StoreMode} (for {@link #doorsOn}), and makes that store
 * unreachable when asked ({@link #stopTheStore()}): the store-down scenario runs last. Every scenario uses keys of its
 * own, so one server serves them all.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
public abstract class FrontDoorContract {

    /** A day, the window of every limit, in seconds. */
    public static final long DAY = 86_400;

    /**
     * The time of every decision at a front door whose clock the test sets ({@link FrontDoor#handMovedClock()}):
     * {@value #RESET} seconds, rounded up, before the day's window turns.
     */
    public static final Instant NOW = Instant.parse("2026-01-01T10:00:00.250Z");

    /** The reset of every limit at {@link #NOW}: the time to midnight, rounded up to whole seconds. */
    public static final long RESET = 50_400;

    /** The policy files every front door is started with, by file name. */
    public static final Map<String, String> POLICIES = Map.of(
            "api.yaml",
            """
            domain: api
            descriptors:
              - key: client
                rate_limit: {unit: day, requests_per_unit: 3, name: per_client}
              - key: user
                rate_limit: {unit: day, requests_per_unit: 10, name: per_user}
              - key: dry
                mode: dry_run
                rate_limit: {unit: day, requests_per_unit: 1, name: dry}
              - key: banned
                mode: shadow_ban
                rate_limit: {unit: day, requests_per_unit: 1, name: banned}
            """,
            "open.yaml",
            """
            domain: open
            descriptors:
              - key: k
                rate_limit: {unit: day, requests_per_unit: 2, name: open_k}
            """,
            "closed.yaml",
            """
            domain: closed
            on_store_failure: deny
            descriptors:
              - key: k
                rate_limit: {unit: day, requests_per_unit: 2, name: closed_k}
            """);

    /** The domains of {@link #POLICIES}. */
    public static final List<String> DOMAINS = List.of("api", "open", "closed");

    /**
     * The request header in which an HTTP front door's test sends a request's descriptors ({@link Request#header()}),
     * for the test's extractor to read back ({@link Request#parts(String)}).
     */
    public static final String REQUEST_HEADER = "Sluice-Test-Descriptors";

    /** The response header in which an HTTP front door's test application echoes the shadow-ban request attribute. */
    public static final String SHADOW_BAN_HEADER = "Sluice-Test-Shadow-Ban";

    // ---- what a front door is asked, and what it answers

    /** One descriptor of one entry, and the request's cost under its limits. */
    public record Part(String key, String value, long cost) {}

    /** A request of {@code domain}, its descriptors in order. */
    public record Request(String domain, List<Part> parts) {
        public Request {
            parts = List.copyOf(parts);
        }

        /** The parts as one header value: {@code key=value*cost}, comma-separated. */
        public String header() {
            StringBuilder sb = new StringBuilder();
            for (Part p : parts) {
                sb.append(sb.length() == 0 ? "" : ",")
                        .append(p.key())
                        .append('=')
                        .append(p.value())
                        .append('*')
                        .append(p.cost());
            }
            return sb.toString();
        }

        /** The parts of a {@link #header()} value. */
        public static List<Part> parts(String header) {
            List<Part> parts = new ArrayList<>();
            for (String p : header.split(",", -1)) {
                int eq = p.indexOf('=');
                int star = p.lastIndexOf('*');
                if (eq < 1 || star < eq) {
                    throw new IllegalArgumentException("not key=value*cost: " + p);
                }
                parts.add(
                        new Part(p.substring(0, eq), p.substring(eq + 1, star), Long.parseLong(p.substring(star + 1))));
            }
            return parts;
        }
    }

    /**
     * One limit as a front door reports it, with its count.
     *
     * @param quota     the limit
     * @param window    its window, whole seconds
     * @param remaining what is left
     * @param reset     seconds, rounded up, until it is back to full (allowed) or the request could pass (refused)
     * @param refused   this limit refused the request
     */
    public record Limit(long quota, long window, long remaining, long reset, boolean refused) {}

    /**
     * A front door's answer.
     *
     * @param allowed   whether the request may go on
     * @param limits    by policy name (the limit's {@code name}), the limits reported with a count; a limit the store
     *                  gave no count for (a failure) is not among them
     * @param fields    the {@code RateLimit-Policy} and {@code RateLimit} fields, those present
     * @param shadowBan the path of the rule that shadow-banned the request
     */
    public record Answer(
            boolean allowed, Map<String, Limit> limits, Map<String, String> fields, Optional<String> shadowBan) {

        private static final Pattern ITEM = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"((?:;[a-z]+=[0-9-]+)*)");
        private static final Pattern PARAM = Pattern.compile(";([a-z]+)=([0-9-]+)");
        private static final Pattern VIOLATED = Pattern.compile("\"violated-policies\"\\s*:\\s*\\[([^\\]]*)\\]");
        private static final Pattern STRING = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");

        /**
         * The answer of an HTTP front door: {@code 429} refuses; each limit from its {@code RateLimit-Policy} item
         * ({@code q}, {@code w}) and its {@code RateLimit} item ({@code r}, {@code t}), refused if the problem body
         * names it in {@code violated-policies}.
         */
        public static Answer ofHttp(
                int status,
                @Nullable String policyField,
                @Nullable String rateLimitField,
                String body,
                @Nullable String shadowBan) {
            Map<String, String> fields = new LinkedHashMap<>();
            if (policyField != null) {
                fields.put("RateLimit-Policy", policyField);
            }
            if (rateLimitField != null) {
                fields.put("RateLimit", rateLimitField);
            }
            Map<String, Map<String, Long>> policies = items(policyField);
            List<String> violated = new ArrayList<>();
            Matcher v = VIOLATED.matcher(body);
            if (v.find()) {
                Matcher s = STRING.matcher(v.group(1));
                while (s.find()) {
                    violated.add(s.group(1));
                }
            }
            Map<String, Limit> limits = new LinkedHashMap<>();
            items(rateLimitField).forEach((name, counts) -> {
                Map<String, Long> policy = policies.getOrDefault(name, Map.of());
                limits.put(
                        name,
                        new Limit(
                                policy.getOrDefault("q", -1L),
                                policy.getOrDefault("w", -1L),
                                counts.getOrDefault("r", -1L),
                                counts.getOrDefault("t", -1L),
                                violated.contains(name)));
            });
            return new Answer(status != 429, limits, fields, Optional.ofNullable(shadowBan));
        }

        /** A structured field's items, by name, with their integer parameters. */
        private static Map<String, Map<String, Long>> items(@Nullable String field) {
            Map<String, Map<String, Long>> items = new LinkedHashMap<>();
            if (field == null) {
                return items;
            }
            Matcher m = ITEM.matcher(field);
            while (m.find()) {
                Map<String, Long> params = new LinkedHashMap<>();
                Matcher p = PARAM.matcher(m.group(2));
                while (p.find()) {
                    params.put(p.group(1), Long.parseLong(p.group(2)));
                }
                items.put(m.group(1).replace("\\\"", "\"").replace("\\\\", "\\"), params);
            }
            return items;
        }
    }

    /** The counters of a front door's application at one moment. */
    public static final class Counts {
        /** One counter: its name as exported (dotted, or in Prometheus' form), its tags and its count. */
        public record Sample(String name, Map<String, String> tags, double value) {}

        private static final Pattern LINE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\{(.*)\\} (\\S+)");
        private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

        private final List<Sample> samples;

        public Counts(List<Sample> samples) {
            this.samples = List.copyOf(samples);
        }

        /** The counters of a Prometheus text page, those with labels. */
        public static Counts ofPrometheus(String page) {
            List<Sample> samples = new ArrayList<>();
            for (String line : page.split("\n", -1)) {
                Matcher m = LINE.matcher(line);
                if (m.matches()) {
                    Map<String, String> tags = new LinkedHashMap<>();
                    Matcher l = LABEL.matcher(m.group(2));
                    while (l.find()) {
                        tags.put(l.group(1), l.group(2));
                    }
                    samples.add(new Sample(m.group(1), tags, Double.parseDouble(m.group(3))));
                }
            }
            return new Counts(samples);
        }

        /**
         * The sum of the counters named {@code name} (Micrometer's dotted name; in Prometheus' form, with
         * underscores and {@code _total}) whose tags include {@code tags} (name, value, …).
         */
        public double count(String name, String... tags) {
            String prometheus = name.replace('.', '_') + "_total";
            double sum = 0;
            for (Sample s : samples) {
                if (!s.name().equals(name) && !s.name().equals(prometheus)) {
                    continue;
                }
                boolean all = true;
                for (int i = 0; i < tags.length; i += 2) {
                    all &= tags[i + 1].equals(s.tags().get(tags[i]));
                }
                if (all) {
                    sum += s.value();
                }
            }
            return sum;
        }
    }

    /** One front door: where a request is asked, and the meters it counts in. */
    public interface FrontDoor {
        /** Asks the request, as a client of this door does. */
        Answer ask(Request request);

        /** The counters of the door's application as they are now. */
        Counts counts();

        /** Whether the door decides at {@link #NOW}, so that resets are exact; else they are checked within a day. */
        default boolean handMovedClock() {
            return false;
        }
    }

    /** For a subclass. */
    protected FrontDoorContract() {}

    /** The front doors over a store that answers, in exact mode. */
    protected abstract List<FrontDoor> doors();

    /** The front doors over the shared store that {@link #stopTheStore()} makes unreachable, in {@code mode}. */
    protected abstract List<FrontDoor> doorsOn(StoreMode mode);

    /** Makes the shared store of {@link #doorsOn} unreachable, as a store server that has stopped. */
    protected abstract void stopTheStore();

    // ---- the scenarios

    /** A key no other scenario, run or class uses. */
    protected static String unique() {
        return UUID.randomUUID().toString();
    }

    protected static Part part(String key, String value, long cost) {
        return new Part(key, value, cost);
    }

    protected static Request request(String domain, Part... parts) {
        return new Request(domain, List.of(parts));
    }

    /** Every descriptor counted while all pass; a refused request counts in none of its limits. */
    @Test
    @Order(1)
    void eachDescriptorIsCountedAndARefusedRequestCountsInNone() {
        for (FrontDoor door : doors()) {
            String client = unique();
            String user = unique();
            Request both = request("api", part("client", client, 1), part("user", user, 1));
            Meters meters = new Meters(door);
            for (int i = 0; i < 3; i++) {
                Answer a = door.ask(both);
                assertTrue(a.allowed(), door + ", request " + i + ": " + a);
                assertLimit(door, a, "per_client", 3, 2 - i, false);
                assertLimit(door, a, "per_user", 10, 9 - i, false);
            }
            Answer refused = door.ask(both);
            assertFalse(refused.allowed(), door + ": " + refused);
            assertLimit(door, refused, "per_client", 3, 0, true);
            assertLimit(door, refused, "per_user", 10, 7, false);
            Answer alone = door.ask(request("api", part("user", user, 1)));
            assertTrue(alone.allowed(), door + ": " + alone);
            assertLimit(door, alone, "per_user", 10, 6, false);
            meters.assertCounted("client", "allowed", 3);
            meters.assertCounted("client", "denied", 1);
            meters.assertCounted("user", "allowed", 4);
            meters.assertCounted("user", "not_counted", 1);
        }
    }

    /** A request of one descriptor: the draft-10 fields, counted down, then a refusal. */
    @Test
    @Order(1)
    void theRateLimitFieldsOfOneDescriptor() {
        for (FrontDoor door : doors()) {
            Request one = request("api", part("client", unique(), 1));
            for (int i = 0; i < 4; i++) {
                long remaining = Math.max(0, 2 - i);
                Answer a = door.ask(one);
                assertEquals(i < 3, a.allowed(), door + ", request " + i + ": " + a);
                assertPerClientFields(door, a, remaining, i == 3);
            }
        }
    }

    /**
     * A refusal reports no room, even when a smaller request would have fit: a cost of 2 with 1 left is refused with
     * remaining 0 everywhere ({@code limit_remaining}, {@code r}); the 1 left still serves a cost of 1.
     */
    @Test
    @Order(1)
    void aRefusalReportsNoRoomEvenWhenASmallerRequestWouldFit() {
        for (FrontDoor door : doors()) {
            String client = unique();
            Answer first = door.ask(request("api", part("client", client, 2)));
            assertTrue(first.allowed(), door + ": " + first);
            assertLimit(door, first, "per_client", 3, 1, false);
            Answer refused = door.ask(request("api", part("client", client, 2)));
            assertFalse(refused.allowed(), door + ": " + refused);
            assertPerClientFields(door, refused, 0, true);
            Answer last = door.ask(request("api", part("client", client, 1)));
            assertTrue(last.allowed(), door + ": the refused request took nothing: " + last);
            assertLimit(door, last, "per_client", 3, 0, false);
        }
    }

    /** Costs per descriptor, one decision: a refusal at one descriptor's cost takes nothing at the other's. */
    @Test
    @Order(1)
    void aRequestOfMixedCostsIsDecidedAllOrNothing() {
        for (FrontDoor door : doors()) {
            String client = unique();
            String user = unique();
            Meters meters = new Meters(door);
            Answer first = door.ask(request("api", part("client", client, 1), part("user", user, 10)));
            assertTrue(first.allowed(), door + ": " + first);
            assertLimit(door, first, "per_client", 3, 2, false);
            assertLimit(door, first, "per_user", 10, 0, false);
            Answer refused = door.ask(request("api", part("client", client, 2), part("user", user, 1)));
            assertFalse(refused.allowed(), door + ": " + refused);
            assertLimit(door, refused, "per_user", 10, 0, true);
            assertLimit(door, refused, "per_client", 3, 2, false);
            Answer after = door.ask(request("api", part("client", client, 2)));
            assertTrue(after.allowed(), door + ": the refused request took nothing from per_client: " + after);
            assertLimit(door, after, "per_client", 3, 0, false);
            meters.assertCounted("client", "allowed", 2);
            meters.assertCounted("client", "not_counted", 1);
            meters.assertCounted("user", "allowed", 1);
            meters.assertCounted("user", "denied", 1);
        }
    }

    /** A dry-run limit never refuses: over it, the request is allowed and counted as a "would deny". */
    @Test
    @Order(1)
    void aDryRunLimitAllowsAndCountsWhatItWouldHaveDenied() {
        for (FrontDoor door : doors()) {
            Request dry = request("api", part("dry", unique(), 1));
            Meters meters = new Meters(door);
            for (int i = 0; i < 2; i++) {
                Answer a = door.ask(dry);
                assertTrue(a.allowed(), door + ", request " + i + ": " + a);
                assertEquals(Optional.empty(), a.shadowBan(), door.toString());
            }
            meters.assertCounted("dry", "allowed", 1);
            meters.assertCounted("dry", "would_deny", 1);
        }
    }

    /** Over a shadow-ban limit the request is answered as allowed, and the application told the rule. */
    @Test
    @Order(1)
    void aShadowBanAllowsAndNamesTheRule() {
        for (FrontDoor door : doors()) {
            Request banned = request("api", part("banned", unique(), 1));
            Meters meters = new Meters(door);
            Answer first = door.ask(banned);
            assertTrue(first.allowed(), door + ": " + first);
            assertEquals(Optional.empty(), first.shadowBan(), door.toString());
            Answer second = door.ask(banned);
            assertTrue(second.allowed(), door + ": " + second);
            assertEquals(Optional.of("banned"), second.shadowBan(), door.toString());
            meters.assertCounted("banned", "allowed", 1);
            meters.assertCounted("banned", "shadow_banned", 1);
        }
    }

    /**
     * The store unreachable, in every mode: in exact and leased mode (a key new to the instance holds no slice) each
     * request is answered by its domain's {@code on_store_failure}, {@code allow} for {@code open} and {@code deny}
     * for {@code closed}, with no count the store never gave, and counted in {@code sluice.policy.store.failures}; in
     * synchronized mode, which never waits for the store, each instance decides on its own counts, within the limit,
     * whatever the domain says.
     */
    @Test
    @Order(2)
    void aStoreThatIsDownIsAnsweredByEachDomainsOnStoreFailureInEveryMode() {
        stopTheStore();
        for (StoreMode mode : StoreMode.values()) {
            for (FrontDoor door : doorsOn(mode)) {
                String what = door + " in " + mode + " mode";
                String key = unique();
                Counts before = door.counts();
                for (String domain : List.of("open", "closed")) {
                    for (int i = 0; i < 3; i++) {
                        Answer a = door.ask(request(domain, part("k", key, 1)));
                        String at = what + ", " + domain + " request " + i + ": " + a;
                        if (mode == StoreMode.SYNCHRONIZED) {
                            assertEquals(i < 2, a.allowed(), at);
                            assertLimit(door, a, domain + "_k", 2, Math.max(0, 1 - i), i >= 2);
                        } else {
                            assertEquals(domain.equals("open"), a.allowed(), at);
                            assertEquals(Map.of(), a.limits(), "no count the store never gave; " + at);
                        }
                    }
                }
                long failures = mode == StoreMode.SYNCHRONIZED ? 0 : 3;
                Counts after = door.counts();
                for (String[] tags : List.of(
                        new String[] {"domain", "open", "answer", "allow"},
                        new String[] {"domain", "closed", "answer", "deny"})) {
                    assertEquals(
                            before.count("sluice.policy.store.failures", tags) + failures,
                            after.count("sluice.policy.store.failures", tags),
                            what + ": sluice.policy.store.failures" + List.of(tags));
                }
            }
        }
    }

    /** Asserts the limit {@code name} of {@code a} and returns it; its reset at {@link #NOW} or within a day. */
    /** Checks {@code per_client}'s counts in {@code a}, and that its draft-10 fields are exactly what they say. */
    private static void assertPerClientFields(FrontDoor door, Answer a, long remaining, boolean refused) {
        Limit l = assertLimit(door, a, "per_client", 3, remaining, refused);
        assertEquals(
                Map.of(
                        "RateLimit-Policy",
                        "\"per_client\";q=3;w=86400",
                        "RateLimit",
                        "\"per_client\";r=" + remaining + ";t=" + l.reset()),
                a.fields(),
                door.toString());
    }

    static Limit assertLimit(FrontDoor door, Answer a, String name, long quota, long remaining, boolean refused) {
        Limit l = a.limits().get(name);
        String what = door + ", " + name + ": " + a;
        assertNotNull(l, what);
        assertEquals(new Limit(quota, DAY, remaining, l.reset(), refused), l, what);
        if (door.handMovedClock()) {
            assertEquals(RESET, l.reset(), what);
        } else {
            assertTrue(l.reset() >= 1 && l.reset() <= DAY, "a reset within the window; " + what);
        }
        return l;
    }

    /** The {@code sluice.policy.requests} counts of {@code api} before a scenario, to assert what it counted. */
    private static final class Meters {
        private final FrontDoor door;
        private final Counts before;
        private @Nullable Counts after;

        Meters(FrontDoor door) {
            this.door = door;
            this.before = door.counts();
        }

        /** Asserts the count of {@code rule} and {@code outcome} rose by {@code n}; the first call reads the counts. */
        void assertCounted(String rule, String outcome, double n) {
            Counts now = after;
            if (now == null) {
                now = door.counts();
                after = now;
            }
            String[] tags = {"domain", "api", "rule", rule, "outcome", outcome};
            assertEquals(
                    before.count("sluice.policy.requests", tags) + n,
                    now.count("sluice.policy.requests", tags),
                    door + ": sluice.policy.requests{domain=api, rule=" + rule + ", outcome=" + outcome + "}");
        }
    }
}
