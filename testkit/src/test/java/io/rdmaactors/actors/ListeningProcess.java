package io.rdmaactors.actors;

import java.net.InetSocketAddress;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * The process of {@link SigtermTest}: a guardian that listens, as a Pekko IO server does, and
 * either stops itself when it hears {@code Unbound} (argument {@code stop-on-unbound}) or ignores
 * it ({@code ignore-unbound}); with a second argument {@code connected} it also connects to its
 * own listener, both ends' handlers stopping themselves on {@code Disconnected}. It prints
 * {@code READY} once listening (and connected) and waits for a signal.
 */
public final class ListeningProcess {

    public static void main(String[] args) {
        boolean stopOnUnbound = args[0].equals("stop-on-unbound");
        boolean connected = args.length > 1 && args[1].equals("connected");
        ActorSystem.create(guardian(stopOnUnbound, connected), "listening-process");
    }

    private static Behavior<RdmaProtocol.ListenerEvent> guardian(boolean stopOnUnbound, boolean connected) {
        return Behaviors.setup(context -> {
            ActorRef<RdmaProtocol.ManagerCommand> manager = Rdma.get(context.getSystem()).manager();
            // as RdmaTestKit.address: the device's own address on rdma-core, where loopback does not route
            String address = System.getProperty("rdma-actors.test.address", "127.0.0.1");
            manager.tell(RdmaProtocol.Listen.on(new InetSocketAddress(address, 0), context.getSelf()));
            return Behaviors.receiveMessage(event -> {
                if (event instanceof RdmaProtocol.Listening listening) {
                    if (connected) {
                        manager.tell(RdmaProtocol.Connect.to(listening.localAddress(),
                                context.spawn(handler(true), "client")));
                    } else {
                        ready();
                    }
                } else if (event instanceof RdmaProtocol.ConnectionRequested request) {
                    request.connection().tell(RdmaProtocol.Accept.with(context.spawn(handler(false), "server")));
                } else if (event instanceof RdmaProtocol.Unbound && stopOnUnbound) {
                    return Behaviors.stopped();
                }
                return Behaviors.same();
            });
        });
    }

    private static Behavior<RdmaProtocol.ConnectionEvent> handler(boolean client) {
        return Behaviors.receiveMessage(event -> {
            if (event instanceof RdmaProtocol.Connected && client) {
                ready();
            } else if (event instanceof RdmaProtocol.Disconnected) {
                return Behaviors.stopped();
            }
            return Behaviors.same();
        });
    }

    private static void ready() {
        System.out.println("READY");
        System.out.flush();
    }
}
