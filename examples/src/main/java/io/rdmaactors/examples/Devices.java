package io.rdmaactors.examples;

import io.rdmaactors.verbs.Device;
import io.rdmaactors.verbs.DeviceAttributes;
import io.rdmaactors.verbs.Fabric;
import io.rdmaactors.verbs.PortAttributes;
import java.util.HexFormat;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** Lists devices and ports, as ibv_devinfo does. */
@Command(name = "devices", description = "List RDMA devices and their ports.")
public final class Devices implements Callable<Integer> {

    @Mixin
    RdmaFlags flags;

    @Override
    public Integer call() {
        flags.oneProcess();
        // no device is a failure, as ibv_devinfo's "No IB devices found" is
        try (Fabric fabric = Program.open(flags.fabric)) {
            for (Device device : fabric.devices()) {
                DeviceAttributes a = device.query();
                System.out.printf("hca_id: %s%n\tfw_ver: %s%n\tnode_guid: %016x%n\tphys_port_cnt: %d%n"
                        + "\tmax_qp: %d  max_qp_wr: %d  max_cqe: %d  max_srq: %d%n\tauto_path_mig: %s  atomics: %s%n",
                        a.name(), a.firmwareVersion(), a.nodeGuid(), a.physicalPortCount(), a.maxQp(), a.maxQpWr(),
                        a.maxCqe(), a.maxSrq(), a.autoPathMigration(), a.atomics());
                for (int p = 1; p <= a.physicalPortCount(); p++) {
                    PortAttributes port = device.queryPort(p);
                    System.out.printf("\t\tport: %d%n\t\t\tstate: %s%n\t\t\tactive_mtu: %d%n\t\t\tlid: %d%n"
                            + "\t\t\tlink_layer: %s%n\t\t\tgid[0]: %s%n", p, port.state(), port.activeMtu().bytes(),
                            port.lid(), port.linkLayer(), HexFormat.ofDelimiter(":").formatHex(port.gid(0)));
                }
            }
        }
        return 0;
    }
}
