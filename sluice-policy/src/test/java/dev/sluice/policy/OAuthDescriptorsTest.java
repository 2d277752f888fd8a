package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class OAuthDescriptorsTest {

    @Test
    void clientCredentialsIsPerClientAndUserGrantsPerClientAndUser() {
        assertEquals(
                List.of(Descriptor.of("client_id", "abc")),
                OAuthDescriptors.forTokenRequest("client_credentials", "abc", null));
        for (String grant : List.of(
                "authorization_code", "refresh_token", "password", "urn:ietf:params:oauth:grant-type:device_code")) {
            assertEquals(
                    List.of(Descriptor.of("client_id", "abc", "username", "bob")),
                    OAuthDescriptors.forTokenRequest(grant, "abc", "bob"));
        }
    }

    @Test
    void aUserGrantWithoutAUsernameIsRefusedClearly() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class, () -> OAuthDescriptors.forTokenRequest("password", "abc", ""));
        assertTrue(e.getMessage().contains("grant_type password"), e::getMessage);
        assertTrue(e.getMessage().contains("username is required"), e::getMessage);
        assertThrows(
                IllegalArgumentException.class, () -> OAuthDescriptors.forTokenRequest("refresh_token", "abc", null));
        assertThrows(IllegalArgumentException.class, () -> OAuthDescriptors.forTokenRequest("password", "", "bob"));
    }
}
