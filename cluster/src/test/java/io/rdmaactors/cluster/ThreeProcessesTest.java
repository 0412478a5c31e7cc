package io.rdmaactors.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.rdmaactors.cluster.RdmaClusterProtocol.PeerConnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerDisconnected;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerEvent;
import io.rdmaactors.cluster.RdmaClusterProtocol.PeerReceived;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Down;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Three members in three JVMs (this one the seed): every pair connects over the soft fabric's
 * links between processes, the two other processes reach each other too, and a member killed
 * with SIGKILL is seen gone by this one.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class ThreeProcessesTest {

    /** Long enough for three JVMs to start in the emulated Soft-RoCE guest. */
    private static final Duration WAIT = Duration.ofSeconds(180);

    /**
     * The class path a member process needs: the JVM's, and that of the class loader a launcher
     * adds (JUnit's console launcher, which runs the tests in the guest, gives it there).
     */
    private static String classPath() throws Exception {
        List<String> parts = new ArrayList<>(List.of(System.getProperty("java.class.path")));
        if (ClusterMemberProcess.class.getClassLoader() instanceof URLClassLoader loader) {
            for (URL url : loader.getURLs()) {
                parts.add(Path.of(url.toURI()).toString());
            }
        }
        return String.join(File.pathSeparator, parts);
    }

    @Test
    void threeProcessesConnectInPairsAndAKilledOneIsSeenGone() throws Exception {
        ActorTestKit kit = ActorTestKit.create("members", ClusterMemberProcess.config(0));
        List<Process> processes = new ArrayList<>();
        try {
            Cluster cluster = Cluster.get(kit.system());
            Address self = cluster.selfMember().address();
            cluster.manager().tell(Join.create(self));
            TestProbe<PeerEvent> events = kit.createTestProbe();
            RdmaCluster.get(kit.system()).subscribe(events.getRef());
            List<Address> others = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                Process p = new ProcessBuilder(List.of(System.getProperty("java.home") + File.separator + "bin"
                        + File.separator + "java", "-cp", classPath(), "-Xmx256m",
                        ClusterMemberProcess.class.getName(), self.toString()))
                        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
                processes.add(p);
                String line = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))
                        .readLine();
                assertNotNull(line, "the member process printed its address");
                others.add(AddressFromURIString.parse(line.substring("MEMBER ".length())));
            }

            Set<Address> connected = new HashSet<>();
            Set<Address> greeted = new HashSet<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while ((connected.size() < 2 || greeted.size() < 2) && System.nanoTime() < deadline) {
                PeerEvent e = events.receiveMessage(WAIT);
                if (e instanceof PeerConnected c) {
                    connected.add(c.member());
                } else if (e instanceof PeerReceived r && r.data().utf8String().startsWith("hello from ")) {
                    greeted.add(r.member());
                }
            }
            assertEquals(Set.copyOf(others), connected, "connected to both other processes");
            assertEquals(Set.copyOf(others), greeted, "and greeted by both over RDMA");

            // the other two processes have their own connection: one relays through it to the other
            RdmaCluster.get(kit.system()).sendTo(others.get(0), ByteString.fromString("relay " + others.get(1)));
            String relayed = null;
            while (relayed == null && System.nanoTime() < deadline + WAIT.toNanos()) {
                if (events.receiveMessage(WAIT) instanceof PeerReceived r && r.data().utf8String().startsWith("got")) {
                    assertEquals(others.get(1), r.member());
                    relayed = r.data().utf8String();
                }
            }
            assertEquals("got via from " + others.get(0), relayed);

            processes.get(1).destroyForcibly();
            while (true) {
                if (events.receiveMessage(WAIT) instanceof PeerDisconnected d && d.member().equals(others.get(1))) {
                    break;
                }
            }
            // downed, so this member's leave converges when it stops
            cluster.manager().tell(new Down(others.get(1)));
        } finally {
            kit.shutdownTestKit();
            for (Process p : processes) {
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
