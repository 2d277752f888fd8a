package dev.sluice.testkit;

import dev.sluice.testkit.FrontDoorContract.Answer;
import dev.sluice.testkit.FrontDoorContract.Counts;
import dev.sluice.testkit.FrontDoorContract.FrontDoor;
import dev.sluice.testkit.FrontDoorContract.Request;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.function.Supplier;

/**
 * A {@link FrontDoor} that is an HTTP application limited by the Servlet filter: a request of a domain is a
 * {@code POST} to {@code base/<domain>} with its descriptors in {@link FrontDoorContract#REQUEST_HEADER}, and the
 * answer is read from the status, the rate-limit fields, the problem body and
 * {@link FrontDoorContract#SHADOW_BAN_HEADER}.
 */
public final class HttpFrontDoor implements FrontDoor {
    private static final HttpClient CLIENT = HttpClient.newHttpClient();

    private final String name;
    private final URI base;
    private final Supplier<Counts> counts;
    private final boolean handMovedClock;

    /**
     * @param base           the application's URI up to the domain, ending in {@code /}
     * @param counts         the application's counters as they are now
     * @param handMovedClock whether the application decides at {@link FrontDoorContract#NOW}
     */
    public HttpFrontDoor(String name, URI base, Supplier<Counts> counts, boolean handMovedClock) {
        this.name = name;
        this.base = base;
        this.counts = counts;
        this.handMovedClock = handMovedClock;
    }

    @Override
    public Answer ask(Request request) {
        HttpRequest r = HttpRequest.newBuilder(base.resolve(request.domain()))
                .header(FrontDoorContract.REQUEST_HEADER, request.header())
                .POST(HttpRequest.BodyPublishers.noBody())
                .build();
        HttpResponse<String> response;
        try {
            response = CLIENT.send(r, HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new UncheckedIOException(name + ": " + r, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return Answer.ofHttp(
                response.statusCode(),
                response.headers().firstValue("RateLimit-Policy").orElse(null),
                response.headers().firstValue("RateLimit").orElse(null),
                response.body(),
                response.headers()
                        .firstValue(FrontDoorContract.SHADOW_BAN_HEADER)
                        .orElse(null));
    }

    @Override
    public Counts counts() {
        return counts.get();
    }

    @Override
    public boolean handMovedClock() {
        return handMovedClock;
    }

    @Override
    public String toString() {
        return name + " (" + base + ")";
    }
}
