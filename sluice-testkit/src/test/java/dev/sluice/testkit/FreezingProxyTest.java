package dev.sluice.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.sluice.testkit.FreezingProxy.WhileFrozen;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The proxy passes bytes both ways, and while frozen holds or drops them as its mode says. */
class FreezingProxyTest {

    private ServerSocket echo;

    /** A server that sends back every byte it gets, one connection at a time. */
    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(
                () -> {
                    while (!echo.isClosed()) {
                        try (Socket s = echo.accept();
                                InputStream in = s.getInputStream();
                                OutputStream out = s.getOutputStream()) {
                            for (int b = in.read(); b >= 0; b = in.read()) {
                                out.write(b);
                                out.flush();
                            }
                        } catch (IOException e) {
                            // closed
                        }
                    }
                },
                "echo");
        t.setDaemon(true);
        t.start();
    }

    @AfterEach
    void stopEcho() throws IOException {
        echo.close();
    }

    private static Socket connect(FreezingProxy proxy) {
        try {
            return new Socket(InetAddress.getLoopbackAddress(), proxy.port());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void aHoldingProxyPassesWhatWasSentWhileFrozenOnceThawedInOrder() throws IOException {
        try (FreezingProxy proxy = new FreezingProxy(echo.getLocalPort(), WhileFrozen.HOLD);
                Socket s = connect(proxy)) {
            s.getOutputStream().write('a');
            assertEquals('a', s.getInputStream().read(), "thawed: the echo comes back");
            proxy.freeze();
            s.getOutputStream().write('b');
            s.getOutputStream().write('c');
            proxy.thaw();
            assertEquals('b', s.getInputStream().read(), "held while frozen, passed on once thawed");
            assertEquals('c', s.getInputStream().read(), "in order");
            assertEquals(0, proxy.droppedBytes(), "a holding proxy drops nothing");
        }
    }

    @Test
    void aDroppingProxyLosesWhatWasSentWhileFrozen() throws IOException {
        try (FreezingProxy proxy = new FreezingProxy(echo.getLocalPort(), WhileFrozen.DROP);
                Socket s = connect(proxy)) {
            s.getOutputStream().write('a');
            assertEquals('a', s.getInputStream().read(), "thawed: the echo comes back");
            proxy.freeze();
            s.getOutputStream().write('b');
            Await.until(
                    "the proxy's pump to read the byte sent while frozen",
                    Await.GENEROUS,
                    () -> proxy.droppedBytes() > 0);
            assertEquals(1, proxy.droppedBytes(), "the byte sent while frozen is dropped");
            proxy.thaw();
            s.getOutputStream().write('c');
            assertEquals('c', s.getInputStream().read(), "thawed again: the next byte passes, the dropped one never");
        }
    }

    @Test
    void closingTheProxyClosesItsConnections() throws IOException {
        Socket s;
        try (FreezingProxy proxy = new FreezingProxy(echo.getLocalPort(), WhileFrozen.HOLD)) {
            s = connect(proxy);
            s.getOutputStream().write('a');
            assertEquals('a', s.getInputStream().read());
            proxy.freeze();
        }
        try (s) {
            assertEquals(-1, s.getInputStream().read(), "the client sees its connection closed");
        }
    }
}
