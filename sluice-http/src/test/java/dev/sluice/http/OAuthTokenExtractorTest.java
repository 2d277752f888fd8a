package dev.sluice.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/** HTTP Basic client credentials as RFC 6749 §2.3.1 encodes them. */
class OAuthTokenExtractorTest {

    static String basic(String userPass) {
        return Base64.getEncoder().encodeToString(userPass.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theClientIdIsFormUrlDecoded() {
        assertEquals("app", OAuthTokenExtractor.basicClientId(basic("app:secret")));
        assertEquals("my:app", OAuthTokenExtractor.basicClientId(basic("my%3Aapp:se:cret")));
        assertEquals("a b+c", OAuthTokenExtractor.basicClientId(basic("a+b%2Bc:s")));
        assertEquals("ünï", OAuthTokenExtractor.basicClientId(basic("%C3%BCn%C3%AF:s")));
        assertEquals("", OAuthTokenExtractor.basicClientId(basic(":s")), "empty: unidentified upstream");
    }

    @Test
    void malformedCredentialsHaveNoClientId() {
        assertNull(OAuthTokenExtractor.basicClientId("!!not-base64!!"));
        assertNull(OAuthTokenExtractor.basicClientId(basic("no-colon")));
        assertNull(OAuthTokenExtractor.basicClientId(basic("bad%zzescape:s")));
    }
}
