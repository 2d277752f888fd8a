package dev.sluice.server;

import com.google.protobuf.Any;
import com.google.protobuf.DescriptorProtos.DescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumDescriptorProto;
import com.google.protobuf.DescriptorProtos.EnumValueDescriptorProto;
import com.google.protobuf.DescriptorProtos.FieldDescriptorProto;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.Descriptors.Descriptor;
import com.google.protobuf.Descriptors.DescriptorValidationException;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors.FileDescriptor;
import com.google.protobuf.DynamicMessage;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.StructProto;
import com.google.protobuf.util.JsonFormat;
import dev.sluice.policy.Policies;
import dev.sluice.policy.PolicyError;
import dev.sluice.policy.PolicyException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * envoyproxy/ratelimit's configuration as xDS carries it: {@code ratelimit.config.ratelimit.v3.RateLimitConfig}, one
 * resource per domain, turned into {@link Policies} through the YAML parser that loads files, so that a resource is
 * validated by the same rules and means the same as the file envoyproxy/ratelimit would write for it
 * ({@code config_xds.go}: the resource becomes its YAML root).
 *
 * <p>The messages are defined here, from the field numbers of envoyproxy/ratelimit's published
 * {@code api/ratelimit/config/ratelimit/v3/rls_conf.proto} (the Envoy API jar does not ship them), and read as
 * {@link DynamicMessage}s:
 *
 * <pre>
 * message RateLimitConfig     { string name = 1; string domain = 2; repeated RateLimitDescriptor descriptors = 3; }
 * message RateLimitDescriptor { string key = 1; string value = 2; RateLimitPolicy rate_limit = 3;
 *                               repeated RateLimitDescriptor descriptors = 4; bool shadow_mode = 5;
 *                               bool detailed_metric = 6; bool quota_mode = 7; google.protobuf.Struct metadata = 8; }
 * message RateLimitPolicy     { RateLimitUnit unit = 1; uint32 requests_per_unit = 2; bool unlimited = 3;
 *                               string name = 4; repeated RateLimitReplace replaces = 5; }
 * message RateLimitReplace    { string name = 1; }
 * enum RateLimitUnit          { UNKNOWN = 0; SECOND = 1; MINUTE = 2; HOUR = 3; DAY = 4; MONTH = 5; YEAR = 6; WEEK = 7; }
 * </pre>
 *
 * <p>A field at its proto3 default is left out of the YAML, as it is absent from the wire: an empty {@code value} is
 * no value, {@code unit: UNKNOWN} no unit (so a limit without a unit is refused as a file without one is).
 */
final class RateLimitConfigs {
    static final String PACKAGE = "ratelimit.config.ratelimit.v3";
    /** The type URL of the resources, which the subscription asks for and checks on every resource. */
    static final String TYPE_URL = "type.googleapis.com/" + PACKAGE + ".RateLimitConfig";

    static final Descriptor CONFIG;
    static final Descriptor DESCRIPTOR;
    static final Descriptor POLICY;

    static {
        FileDescriptorProto file = FileDescriptorProto.newBuilder()
                .setName("ratelimit/config/ratelimit/v3/rls_conf.proto")
                .setPackage(PACKAGE)
                .setSyntax("proto3")
                .addDependency(StructProto.getDescriptor().getName())
                .addMessageType(message(
                        "RateLimitConfig",
                        string("name", 1),
                        string("domain", 2),
                        repeated(message("descriptors", 3, "RateLimitDescriptor"))))
                .addMessageType(message(
                        "RateLimitDescriptor",
                        string("key", 1),
                        string("value", 2),
                        message("rate_limit", 3, "RateLimitPolicy"),
                        repeated(message("descriptors", 4, "RateLimitDescriptor")),
                        bool("shadow_mode", 5),
                        bool("detailed_metric", 6),
                        bool("quota_mode", 7),
                        field("metadata", 8, FieldDescriptorProto.Type.TYPE_MESSAGE)
                                .setTypeName(".google.protobuf.Struct")))
                .addMessageType(message(
                        "RateLimitPolicy",
                        field("unit", 1, FieldDescriptorProto.Type.TYPE_ENUM).setTypeName(type("RateLimitUnit")),
                        field("requests_per_unit", 2, FieldDescriptorProto.Type.TYPE_UINT32),
                        bool("unlimited", 3),
                        string("name", 4),
                        repeated(message("replaces", 5, "RateLimitReplace"))))
                .addMessageType(message("RateLimitReplace", string("name", 1)))
                .addEnumType(units())
                .build();
        try {
            FileDescriptor fd = FileDescriptor.buildFrom(file, new FileDescriptor[] {StructProto.getDescriptor()});
            CONFIG = fd.findMessageTypeByName("RateLimitConfig");
            DESCRIPTOR = fd.findMessageTypeByName("RateLimitDescriptor");
            POLICY = fd.findMessageTypeByName("RateLimitPolicy");
        } catch (DescriptorValidationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private RateLimitConfigs() {}

    /**
     * The policies of one state of the world: every resource, one domain each, loaded as files are.
     *
     * @throws PolicyException with every problem of every resource, each named {@code xds:<resource name>}: a resource
     *                         of another type, one that does not decode, and whatever the YAML parser refuses (a
     *                         missing domain, a bad unit, a domain in two resources, …)
     */
    static Policies policies(List<Any> resources) {
        Map<String, String> sources = new LinkedHashMap<>();
        List<PolicyError> errors = new ArrayList<>();
        for (int i = 0; i < resources.size(); i++) {
            Any resource = resources.get(i);
            String fallback = "xds:resource[" + i + "]";
            if (!resource.getTypeUrl().equals(TYPE_URL)) {
                errors.add(new PolicyError(
                        fallback,
                        0,
                        0,
                        "",
                        "a resource of type '" + resource.getTypeUrl() + "': expected " + TYPE_URL));
                continue;
            }
            DynamicMessage config;
            try {
                config = DynamicMessage.parseFrom(CONFIG, resource.getValue());
            } catch (InvalidProtocolBufferException e) {
                errors.add(new PolicyError(fallback, 0, 0, "", "not a RateLimitConfig: " + e.getMessage()));
                continue;
            }
            String name = (String) config.getField(CONFIG.findFieldByName("name"));
            String source = "xds:" + (name.isEmpty() ? "resource[" + i + "]" : name);
            if (sources.containsKey(source)) {
                errors.add(new PolicyError(
                        source, 0, 0, "name", "two resources named '" + name + "': every resource has its own name"));
                continue;
            }
            sources.put(source, yaml(config));
        }
        try {
            Policies policies = Policies.parse(sources);
            if (errors.isEmpty()) {
                return policies;
            }
        } catch (PolicyException e) {
            errors.addAll(e.errors());
        }
        throw new PolicyException(errors);
    }

    /**
     * The YAML text of one {@code RateLimitConfig}, as the file envoyproxy/ratelimit would load for it: JSON's syntax
     * (a subset of YAML), one field per line, so that an error's line names the field.
     */
    static String yaml(Message config) {
        StringBuilder out = new StringBuilder("{\n");
        out.append("\"domain\": ").append(JsonString.quote((String) config.getField(CONFIG.findFieldByName("domain"))));
        descriptors(out, config, CONFIG.findFieldByName("descriptors"));
        return out.append("\n}\n").toString();
    }

    private static void descriptors(StringBuilder out, Message parent, FieldDescriptor field) {
        int n = parent.getRepeatedFieldCount(field);
        if (n == 0) {
            return;
        }
        out.append(",\n\"descriptors\": [");
        for (int i = 0; i < n; i++) {
            Message d = (Message) parent.getRepeatedField(field, i);
            out.append(i == 0 ? "\n{" : ",\n{");
            out.append("\"key\": ").append(JsonString.quote(text(d, "key")));
            String value = text(d, "value");
            if (!value.isEmpty()) {
                out.append(",\n\"value\": ").append(JsonString.quote(value));
            }
            FieldDescriptor rateLimit = DESCRIPTOR.findFieldByName("rate_limit");
            if (d.hasField(rateLimit)) {
                out.append(",\n\"rate_limit\": ");
                policy(out, (Message) d.getField(rateLimit));
            }
            for (String flag : List.of("shadow_mode", "detailed_metric", "quota_mode")) {
                if ((Boolean) d.getField(DESCRIPTOR.findFieldByName(flag))) {
                    out.append(",\n\"").append(flag).append("\": true");
                }
            }
            FieldDescriptor metadata = DESCRIPTOR.findFieldByName("metadata");
            if (d.hasField(metadata)) {
                out.append(",\n\"metadata\": ").append(json((Message) d.getField(metadata)));
            }
            descriptors(out, d, DESCRIPTOR.findFieldByName("descriptors"));
            out.append("}");
        }
        out.append("\n]");
    }

    private static void policy(StringBuilder out, Message p) {
        boolean unlimited = (Boolean) p.getField(POLICY.findFieldByName("unlimited"));
        int requests = (Integer) p.getField(POLICY.findFieldByName("requests_per_unit"));
        EnumValueDescriptor unit = (EnumValueDescriptor) p.getField(POLICY.findFieldByName("unit"));
        StringBuilder fields = new StringBuilder();
        if (unit.getNumber() != 0) {
            String name = unit.getType().findValueByNumber(unit.getNumber()) != null
                    ? unit.getName()
                    : "unit number " + unit.getNumber();
            fields.append(", \"unit\": ").append(JsonString.quote(name));
        }
        if (!unlimited || requests != 0) {
            fields.append(", \"requests_per_unit\": ").append(Integer.toUnsignedString(requests));
        }
        if (unlimited) {
            fields.append(", \"unlimited\": true");
        }
        String name = text(p, "name");
        if (!name.isEmpty()) {
            fields.append(", \"name\": ").append(JsonString.quote(name));
        }
        FieldDescriptor replaces = POLICY.findFieldByName("replaces");
        int n = p.getRepeatedFieldCount(replaces);
        if (n > 0) {
            fields.append(", \"replaces\": [");
            for (int i = 0; i < n; i++) {
                Message r = (Message) p.getRepeatedField(replaces, i);
                fields.append(i == 0 ? "" : ", ")
                        .append("{\"name\": ")
                        .append(JsonString.quote(text(r, "name")))
                        .append('}');
            }
            fields.append(']');
        }
        out.append('{').append(fields.length() == 0 ? "" : fields.substring(2)).append('}');
    }

    private static String text(Message m, String field) {
        return (String) m.getField(m.getDescriptorForType().findFieldByName(field));
    }

    private static String json(Message struct) {
        try {
            return JsonFormat.printer()
                    .omittingInsignificantWhitespace()
                    .print(Struct.parseFrom(struct.toByteString()));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("a Struct read from the wire is printable", e);
        }
    }

    private static DescriptorProto message(String name, FieldDescriptorProto.Builder... fields) {
        DescriptorProto.Builder b = DescriptorProto.newBuilder().setName(name);
        for (FieldDescriptorProto.Builder f : fields) {
            b.addField(f);
        }
        return b.build();
    }

    private static FieldDescriptorProto.Builder field(String name, int number, FieldDescriptorProto.Type type) {
        return FieldDescriptorProto.newBuilder()
                .setName(name)
                .setNumber(number)
                .setType(type)
                .setLabel(FieldDescriptorProto.Label.LABEL_OPTIONAL);
    }

    private static FieldDescriptorProto.Builder string(String name, int number) {
        return field(name, number, FieldDescriptorProto.Type.TYPE_STRING);
    }

    private static FieldDescriptorProto.Builder bool(String name, int number) {
        return field(name, number, FieldDescriptorProto.Type.TYPE_BOOL);
    }

    private static FieldDescriptorProto.Builder message(String name, int number, String type) {
        return field(name, number, FieldDescriptorProto.Type.TYPE_MESSAGE).setTypeName(type(type));
    }

    private static FieldDescriptorProto.Builder repeated(FieldDescriptorProto.Builder f) {
        return f.setLabel(FieldDescriptorProto.Label.LABEL_REPEATED);
    }

    private static String type(String name) {
        return "." + PACKAGE + "." + name;
    }

    private static EnumDescriptorProto units() {
        EnumDescriptorProto.Builder b = EnumDescriptorProto.newBuilder().setName("RateLimitUnit");
        String[] names = {"UNKNOWN", "SECOND", "MINUTE", "HOUR", "DAY", "MONTH", "YEAR", "WEEK"};
        for (int i = 0; i < names.length; i++) {
            b.addValue(EnumValueDescriptorProto.newBuilder().setName(names[i]).setNumber(i));
        }
        return b.build();
    }
}
