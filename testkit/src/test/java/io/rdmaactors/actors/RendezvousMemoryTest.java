package io.rdmaactors.actors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Rendezvous memory is reused by size class, within the JVM's bound; small sizes are not pooled. */
class RendezvousMemoryTest {

    @Test
    void aBufferGivenBackServesTheNextMessageOfItsSizeClass() {
        ByteBuffer first = RendezvousMemory.take(300_000);
        assertEquals(512 << 10, first.capacity(), "rounded up to a power of two");
        assertTrue(first.isDirect());
        RendezvousMemory.give(first);
        ByteBuffer again = RendezvousMemory.take(262_145);
        assertSame(first, again, "the same class takes the buffer given back");
        assertEquals(0, again.position());
        assertEquals(again.capacity(), again.limit());
        RendezvousMemory.give(again);
    }

    @Test
    void smallBuffersAreNotPooled() {
        ByteBuffer small = RendezvousMemory.take(5_000);
        assertEquals(5_000, small.capacity());
        RendezvousMemory.give(small);
        assertNotSame(small, RendezvousMemory.take(5_000));
    }

    @Test
    void theJvmKeepsAtMostItsBound() {
        int size = 16 << 20;
        List<ByteBuffer> taken = new ArrayList<>();
        for (long kept = 0; kept <= RendezvousMemory.KEPT + size; kept += size) {
            taken.add(RendezvousMemory.take(size));
        }
        taken.forEach(RendezvousMemory::give);
        List<ByteBuffer> reused = new ArrayList<>();
        for (int i = 0; i < taken.size(); i++) {
            ByteBuffer b = RendezvousMemory.take(size);
            if (taken.stream().anyMatch(t -> t == b)) {
                reused.add(b);
            }
        }
        assertTrue(reused.size() * (long) size <= RendezvousMemory.KEPT,
                reused.size() + " buffers of 16 MiB kept, more than the bound of " + RendezvousMemory.KEPT);
        assertTrue(!reused.isEmpty(), "some were kept");
    }
}
