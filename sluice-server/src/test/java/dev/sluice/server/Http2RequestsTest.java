package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.server.HttpTransport.Answer;
import dev.sluice.server.HttpTransport.Request;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http2.DefaultHttp2DataFrame;
import io.netty.handler.codec.http2.DefaultHttp2Headers;
import io.netty.handler.codec.http2.DefaultHttp2HeadersFrame;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameStream;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.handler.codec.http2.Http2WindowUpdateFrame;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Http2Requests} on an {@link EmbeddedChannel}, fed HTTP/2 frames as Netty's codec would hand them over: what a
 * client sends beyond what flow control lets a raw-socket test send at once (a body sent over the limit, bodies in
 * progress over the connection's bound), and the flow-control credit given back.
 */
class Http2RequestsTest {
    private final List<Request> asked = new ArrayList<>();
    private HttpTransport transport;
    private EmbeddedChannel channel;

    @BeforeEach
    void start() throws IOException {
        transport = new HttpTransport(
                new InetSocketAddress("127.0.0.1", 0),
                1,
                Duration.ofSeconds(10),
                Duration.ofSeconds(60),
                new HttpTransport.Handler() {
                    @Override
                    public boolean blocking(Request r) {
                        return false;
                    }

                    @Override
                    public Answer answer(Request r) {
                        asked.add(r);
                        byte[] body = r.body();
                        return body == null
                                ? Answer.error(413, "over the limit")
                                : Answer.of(200, "text/plain", "got " + body.length + " bytes")
                                        .with("RateLimit-Policy", "\"p\";q=1");
                    }

                    @Override
                    public Answer busy(Request r) {
                        throw new AssertionError("the pool is not used here");
                    }
                });
        channel = new EmbeddedChannel(new Http2Requests(transport));
    }

    @AfterEach
    void stop() {
        channel.finishAndReleaseAll();
        transport.close();
    }

    private record Stream(int id) implements Http2FrameStream {
        @Override
        public Http2Stream.State state() {
            return Http2Stream.State.OPEN;
        }
    }

    private static DefaultHttp2Headers post(String path) {
        DefaultHttp2Headers h = new DefaultHttp2Headers();
        h.method("POST").path(path).scheme("http").authority("localhost");
        h.set("authorization", "Bearer x");
        return h;
    }

    private void send(Stream s, int bytes, boolean end) {
        DefaultHttp2DataFrame f = new DefaultHttp2DataFrame(Unpooled.wrappedBuffer(new byte[bytes]), end);
        channel.writeInbound(f.stream(s));
    }

    /** The frames written back: window updates counted, the rest returned. */
    private List<Object> written(long[] credit) {
        List<Object> out = new ArrayList<>();
        for (Object o; (o = channel.readOutbound()) != null; ) {
            if (o instanceof Http2WindowUpdateFrame w) {
                credit[0] += w.windowSizeIncrement();
            } else {
                out.add(o);
            }
        }
        return out;
    }

    @Test
    void aRequestInFramesIsAnsweredWithItsHeadersInLowerCaseAndItsCreditGivenBack() {
        Stream s = new Stream(3);
        channel.writeInbound(new DefaultHttp2HeadersFrame(post("/json?x=1"), false).stream(s));
        send(s, 16_384, false);
        send(s, 100, true);
        long[] credit = {0};
        List<Object> out = written(credit);
        assertEquals(16_484, credit[0], "every byte's credit given back");
        assertEquals(1, asked.size());
        Request r = asked.get(0);
        assertEquals("POST", r.method());
        assertEquals("/json", r.path());
        assertEquals("Bearer x", r.headers().get("Authorization"));
        assertEquals("localhost", r.headers().get("Host"));
        Http2HeadersFrame h = (Http2HeadersFrame) out.get(0);
        assertEquals("200", h.headers().status().toString());
        assertEquals("\"p\";q=1", h.headers().get("ratelimit-policy").toString());
        assertEquals("text/plain", h.headers().get("content-type").toString());
        Http2DataFrame d = (Http2DataFrame) out.get(1);
        assertTrue(d.isEndStream());
        assertEquals("got 16484 bytes", d.content().toString(StandardCharsets.UTF_8));
        out.forEach(ReferenceCountUtil::release);
    }

    @Test
    void aBodySentOverTheLimitIsAnsweredAtOnceAndTheRestRefused() {
        Stream s = new Stream(5);
        channel.writeInbound(new DefaultHttp2HeadersFrame(post("/json"), false).stream(s));
        for (int sent = 0; sent <= HttpTransport.MAX_BODY; sent += 16_384) {
            send(s, 16_384, false);
        }
        long[] credit = {0};
        List<Object> out = written(credit);
        assertEquals(1, asked.size(), "answered once the body passed the limit, not at its end");
        assertNull(asked.get(0).body(), "the body is dropped: the service answers as for any body over the limit");
        assertEquals("413", ((Http2HeadersFrame) out.get(0)).headers().status().toString());
        Http2ResetFrame reset = (Http2ResetFrame) out.get(2);
        assertEquals(Http2Error.NO_ERROR.code(), reset.errorCode(), "RST_STREAM NO_ERROR: send no more of it");
        send(s, 16_384, true); // what was already on its way: dropped, its credit given back
        assertEquals(1, asked.size());
        written(credit);
        assertEquals(HttpTransport.MAX_BODY + 16_384 + 16_384, credit[0]);
        out.forEach(ReferenceCountUtil::release);
    }

    @Test
    void bodiesInProgressOverTheConnectionsBoundAreAnswered503() {
        int streams = (int) (Http2Requests.MAX_BUFFERED / HttpTransport.MAX_BODY);
        for (int i = 0; i < streams; i++) { // each just under the limit, none ended
            Stream s = new Stream(1 + 2 * i);
            channel.writeInbound(new DefaultHttp2HeadersFrame(post("/json"), false).stream(s));
            for (int sent = 0; sent + 16_384 <= HttpTransport.MAX_BODY; sent += 16_384) {
                send(s, 16_384, false);
            }
        }
        long[] credit = {0};
        assertEquals(List.of(), written(credit), "all held so far");
        Stream over = new Stream(1 + 2 * streams);
        channel.writeInbound(new DefaultHttp2HeadersFrame(post("/json"), false).stream(over));
        send(over, 16_384, false);
        List<Object> out = written(credit);
        Http2HeadersFrame h = (Http2HeadersFrame) out.get(0);
        assertEquals("503", h.headers().status().toString());
        assertEquals("1", h.headers().get("retry-after").toString());
        assertEquals(over.id(), h.stream().id());
        assertEquals(List.of(), asked, "the service was not asked");
        send(new Stream(1), 0, true); // the first stream ends: its body is answered, and frees its part
        out.addAll(written(credit));
        assertEquals(1, asked.size());
        assertEquals(HttpTransport.MAX_BODY / 16_384 * 16_384, asked.get(0).body().length);
        out.forEach(ReferenceCountUtil::release);
    }
}
