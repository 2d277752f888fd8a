package dev.sluice.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A descriptor's equality and hash. */
class DescriptorTest {

    @Test
    void equalDescriptorsHaveEqualHashesWhicheverFactoryMadeThem() {
        Descriptor a = Descriptor.of("client_id", "abc", "username", "bob");
        Descriptor b = Descriptor.of(
                List.of(new Descriptor.Entry("client_id", "abc"), new Descriptor.Entry("username", "bob")));
        assertEquals(a, b);
        assertEquals(a.hashCode(), b.hashCode());
        assertNotEquals(a, Descriptor.of("username", "bob", "client_id", "abc"));
        assertNotEquals(a, Descriptor.of("client_id", "abcusername", "bob", ""));
    }

    @Test
    void numberedClientsAndUsersDoNotShareHashes() {
        // with List.hashCode's sum, client-0036/user-8786 and client-0037/user-8776 collide
        assertNotEquals(
                Descriptor.of("client_id", "client-0036", "username", "user-8786")
                        .hashCode(),
                Descriptor.of("client_id", "client-0037", "username", "user-8776")
                        .hashCode());
        Set<Integer> hashes = new HashSet<>();
        for (int c = 0; c < 100; c++) {
            for (int u = 0; u < 200; u++) {
                hashes.add(Descriptor.of(
                                "client_id", String.format("client-%04d", c), "username", String.format("user-%04d", u))
                        .hashCode());
            }
        }
        // List.hashCode's sum gives these 20,000 descriptors 2,090 hashes; mixed, nearly every one has its own
        assertTrue(hashes.size() >= 19_990, hashes.size() + " distinct hashes");
    }
}
