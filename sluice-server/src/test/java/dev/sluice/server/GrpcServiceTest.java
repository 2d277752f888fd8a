package dev.sluice.server;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.KnownLength;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class GrpcServiceTest {

    /** gRPC's message streams say their length; this one can be told to say less. */
    private static final class Sized extends ByteArrayInputStream implements KnownLength {
        private final int shortBy;

        Sized(byte[] bytes, int shortBy) {
            super(bytes);
            this.shortBy = shortBy;
        }

        @Override
        public synchronized int available() {
            return super.available() - shortBy;
        }
    }

    private static final byte[] MESSAGE = "a message of some bytes".getBytes(StandardCharsets.UTF_8);

    @Test
    void aMessageOfKnownLengthIsReadWhole() {
        assertArrayEquals(MESSAGE, GrpcService.BYTES.parse(new Sized(MESSAGE, 0)));
        assertArrayEquals(new byte[0], GrpcService.BYTES.parse(new Sized(new byte[0], 0)));
    }

    @Test
    void aStreamOfUnknownLengthIsReadToItsEnd() {
        assertArrayEquals(MESSAGE, GrpcService.BYTES.parse(new ByteArrayInputStream(MESSAGE)));
    }

    @Test
    void aStreamLongerThanItSaidIsRefusedNotCut() {
        StatusRuntimeException e =
                assertThrows(StatusRuntimeException.class, () -> GrpcService.BYTES.parse(new Sized(MESSAGE, 3)));
        assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
        assertEquals(
                "cannot read the message: java.io.IOException: the message's length is not what its stream said",
                e.getStatus().getDescription());
    }
}
