package io.rdmaactors.verbs;

/**
 * A device's capabilities ({@code struct ibv_device_attr}), the fields programs size things by.
 *
 * @param autoPathMigration {@code IBV_DEVICE_AUTO_PATH_MIG} is in {@code device_cap_flags}
 * @param atomics           the device supports atomics ({@code atomic_cap} is not NONE)
 */
public record DeviceAttributes(String name, String firmwareVersion, long nodeGuid, int vendorId, int vendorPartId,
                               int physicalPortCount, int maxQp, int maxQpWr, int maxSge, int maxCq, int maxCqe,
                               int maxMr, long maxMrSize, int maxPd, int maxQpRdAtomic, int maxSrq, int maxSrqWr,
                               int maxSrqSge, int maxMulticastGroups, int maxMulticastQpAttach,
                               boolean autoPathMigration, boolean atomics) {
}
