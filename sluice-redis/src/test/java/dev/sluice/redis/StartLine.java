package dev.sluice.redis;

import dev.sluice.testkit.Await;
import dev.sluice.testkit.FreshJvm;
import dev.sluice.testkit.server.RedisServers;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * Fresh JVMs on the shared Redis that begin their work at one moment. Process {@code j} is given the Redis URI, its
 * own arguments, a file to create once it is ready and a go file whose appearance starts it; {@link #start} returns
 * once every process is ready, {@link #go} starts them all.
 */
final class StartLine {

    private final Path go;
    private final List<FreshJvm> jvms;

    private StartLine(Path go, List<FreshJvm> jvms) {
        this.go = go;
        this.jvms = jvms;
    }

    /**
     * Starts {@code processes} JVMs running {@code main} with the arguments {@code uri, args(j)…, ready-j, go} (files
     * in {@code dir}) and waits until each has created its ready file.
     */
    static StartLine start(Path dir, int processes, Class<?> main, IntFunction<List<String>> args) {
        Path go = dir.resolve("go");
        List<FreshJvm> jvms = new ArrayList<>();
        List<Path> ready = new ArrayList<>();
        for (int j = 0; j < processes; j++) {
            Path r = dir.resolve("ready-" + j);
            ready.add(r);
            List<String> all = new ArrayList<>();
            all.add(RedisServers.shared().uri());
            all.addAll(args.apply(j));
            all.add(r.toString());
            all.add(go.toString());
            jvms.add(FreshJvm.start(main, all.toArray(String[]::new)));
        }
        Await.until("every process ready", Await.GENEROUS, () -> ready.stream().allMatch(Files::exists));
        return new StartLine(go, List.copyOf(jvms));
    }

    /** The processes, in the order of {@code j}. */
    List<FreshJvm> jvms() {
        return jvms;
    }

    /** Creates the go file with {@code content}, written whole before the file appears under its name. */
    void go(String content) throws IOException {
        Path tmp = go.resolveSibling(go.getFileName() + ".tmp");
        Files.writeString(tmp, content);
        Files.move(tmp, go, StandardCopyOption.ATOMIC_MOVE);
    }
}
