package dev.sluice.server;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The options of one subcommand: {@code --name value}, {@code --name=value}, flags without a value, and the operands
 * left over. Every problem is a {@link UsageException} naming the option and the value.
 */
public final class Options {
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

    private final String command;
    private final Map<String, String> values = new HashMap<>();
    private final List<String> operands = new ArrayList<>();

    private Options(String command) {
        this.command = command;
    }

    /**
     * Parses {@code args}.
     *
     * @param valued the options that take a value, without their dashes
     * @param flags  the options that take none
     */
    public static Options parse(String command, List<String> args, Set<String> valued, Set<String> flags) {
        Options o = new Options(command);
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (!a.startsWith("--")) {
                o.operands.add(a);
                continue;
            }
            String name = a.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (flags.contains(name)) {
                if (value != null) {
                    throw new UsageException(command + ": --" + name + " takes no value, was given '" + value + "'");
                }
                o.values.put(name, "true");
            } else if (valued.contains(name)) {
                if (value == null) {
                    if (i + 1 >= args.size()) {
                        throw new UsageException(command + ": --" + name + " needs a value");
                    }
                    value = args.get(++i);
                }
                o.values.put(name, value);
            } else {
                throw new UsageException(
                        command + ": unknown option '" + a + "' (see: sluice-server " + command + " --help)");
            }
        }
        return o;
    }

    public List<String> operands() {
        return operands;
    }

    public boolean flag(String name) {
        return values.containsKey(name);
    }

    @Nullable
    public String string(String name) {
        return values.get(name);
    }

    public String string(String name, String defaultValue) {
        String v = values.get(name);
        return v == null ? defaultValue : v;
    }

    public int port(String name, int defaultValue) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        try {
            int p = Integer.parseInt(v);
            if (p >= 0 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(name, v, "a port number from 0 to 65535 (0: any free port)");
    }

    public long positiveLong(String name, long defaultValue) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        try {
            long n = Long.parseLong(v);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(name, v, "a whole number of at least 1");
    }

    /** A whole number from {@code min} to {@code max}, or {@code defaultValue} if the option is not given. */
    public int intBetween(String name, int defaultValue, int min, int max) {
        String v = values.get(name);
        if (v == null) {
            return defaultValue;
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw bad(name, v, "a whole number from " + min + " to " + max);
    }

    @Nullable
    public Duration duration(String name) {
        String v = values.get(name);
        if (v == null) {
            return null;
        }
        Matcher m = DURATION.matcher(v);
        if (m.matches()) {
            try {
                long n = Long.parseLong(m.group(1));
                Duration d =
                        switch (m.group(2)) {
                            case "ms" -> Duration.ofMillis(n);
                            case "s" -> Duration.ofSeconds(n);
                            case "m" -> Duration.ofMinutes(n);
                            default -> Duration.ofHours(n);
                        };
                if (!d.isZero()) {
                    return d;
                }
            } catch (NumberFormatException | ArithmeticException e) {
                // reported below
            }
        }
        throw bad(name, v, "a positive duration such as 100ms, 1s, 5m or 1h");
    }

    public InetAddress address(String name, String defaultValue) {
        String v = string(name, defaultValue);
        try {
            return InetAddress.getByName(v);
        } catch (UnknownHostException e) {
            throw bad(name, v, "an IP address or a host name of this machine, such as 127.0.0.1 or 0.0.0.0");
        }
    }

    public UsageException bad(String name, String value, String expected) {
        return new UsageException(command + ": --" + name + " '" + value + "' is not valid: expected " + expected);
    }
}
