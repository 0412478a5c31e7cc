#!/bin/bash
# Installs what vm.sh needs on a Debian bookworm host (root, apt-get update done).
# linux-image-amd64 (6.1) ships rdma_rxe, ib_uverbs, rdma_cm, rdma_ucm as modules;
# rdma-core & co. are the userspace that the guest runs via the 9p-shared host root.
set -euo pipefail
apt-get update -qq
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends \
  qemu-system-x86 linux-image-amd64 busybox-static kmod cpio xz-utils iproute2 \
  rdma-core librdmacm1 libibverbs1 ibverbs-providers rdmacm-utils ibverbs-utils perftest
