package io.rdmaactors.ffm.binding;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.sun.jna.Pointer;
import io.rdmaactors.jna.binding.JnaRdmaCore;
import io.rdmaactors.jna.binding.LibC;
import io.rdmaactors.jna.binding.RdmaAddrinfo;
import io.rdmaactors.jna.binding.RdmaCore;
import io.rdmaactors.verbs.FabricUnavailableException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The FFM binding answers as the JNA binding does, call for call, where no RDMA device is needed:
 * errno, strings, out-parameters, struct arguments, byte arrays; the guest's suites run the rest.
 */
class FfmRdmaCoreTest {

    private static RdmaCore jna;
    private static RdmaCore ffm;

    @BeforeAll
    static void bindings() {
        try {
            jna = new JnaRdmaCore();
            RdmaCoreLibraries.load();
        } catch (FabricUnavailableException e) {
            assumeTrue(false, "rdma-core is not installed here: " + e.getMessage());
        }
        ffm = new FfmRdmaCore();
    }

    @Test
    void aFailedCallLeavesErrnoForTheCallingThread() {
        for (RdmaCore core : new RdmaCore[] {jna, ffm}) {
            assertEquals(-1, core.close(-1));
            assertEquals(9, core.errno(), "EBADF");
            assertEquals(-1, core.fcntl(-1, LibC.F_GETFL, 0));
            assertEquals(9, core.lastError("fcntl").errno());
        }
    }

    @Test
    void errorTextsAreLibcs() {
        for (int errno : new int[] {1, 2, 11, 22, 110}) {
            assertEquals(jna.strerror(errno), ffm.strerror(errno));
        }
        for (int code : new int[] {-2, -3, -8, -10, -11}) {
            assertEquals(jna.gai_strerror(code), ffm.gai_strerror(code));
        }
    }

    @Test
    void anEventfdCountsWhatIsWrittenAndReadsBackIntoTheArray() {
        int fd = ffm.eventfd(0, LibC.EFD_NONBLOCK | LibC.EFD_CLOEXEC);
        assertTrue(fd >= 0, "eventfd: errno " + ffm.errno());
        try {
            byte[] three = {3, 0, 0, 0, 0, 0, 0, 0};
            assertEquals(8, ffm.write(fd, three, 8));
            assertEquals(8, ffm.write(fd, three, 8));
            byte[] counter = new byte[8];
            assertEquals(8, ffm.read(fd, counter, 8));
            assertArrayEquals(new byte[] {6, 0, 0, 0, 0, 0, 0, 0}, counter);
            assertEquals(-1, ffm.read(fd, counter, 8));
            assertEquals(11, ffm.errno(), "EAGAIN once drained");
        } finally {
            assertEquals(0, ffm.close(fd));
        }
    }

    @Test
    void addressInfoTakesHintsAndGivesTheSameAnswers() {
        String[] jnaAnswer = resolve(jna);
        String[] ffmAnswer = resolve(ffm);
        assertArrayEquals(jnaAnswer, ffmAnswer);
    }

    /**
     * rdma_getaddrinfo of a numeric, passive address: 0 and the first answer's QP type, port space
     * and next, or rc and errno where it fails (without an RDMA device it does).
     */
    private static String[] resolve(RdmaCore core) {
        RdmaAddrinfo hints = new RdmaAddrinfo();
        hints.ai_flags = RdmaAddrinfo.RAI_PASSIVE;
        hints.ai_family = RdmaAddrinfo.AF_INET;
        hints.ai_port_space = 0x0106;
        long[] result = new long[1];
        int rc = core.rdma_getaddrinfo("127.0.0.1", "7471", hints, result);
        if (rc != 0) {
            return new String[] {Integer.toString(rc), Integer.toString(core.errno())};
        }
        try {
            Pointer ai = new Pointer(result[0]);
            return new String[] {"0", Integer.toString(ai.getInt(RdmaAddrinfo.QP_TYPE)),
                    Integer.toString(ai.getInt(RdmaAddrinfo.PORT_SPACE)), Long.toString(ai.getLong(RdmaAddrinfo.NEXT))};
        } finally {
            core.rdma_freeaddrinfo(result[0]);
        }
    }
}
