#!/bin/bash
# JMH (bench VerbCallCost): one static-inline verb through the ibv_context.ops pointer, direct-mapped
# (the jna provider's way) and through com.sun.jna.Function, against an empty JNA call; and one
# post_send + poll_cq pair through the SPI. Needs an RDMA device: run it inside the Soft-RoCE guest
#   RXE_VM_TCG_THREAD=multi native/softroce-vm/vm.sh native/verb-call-cost.sh
# or on a host with RDMA hardware (ADDR=its address). Build the bench on the host first
# (mvn -B -DskipTests package -pl bench -am). Extra arguments go to JMH (e.g. -wi 5 -i 10).
set -euo pipefail
cd "$(dirname "$0")/.."
ADDR=${ADDR:-10.0.2.15}
ulimit -l unlimited 2>/dev/null || true
[ -f bench/target/classes/META-INF/BenchmarkList ] && [ -f bench/target/classpath.txt ] ||
  { echo "build the bench first (mvn -B -DskipTests package -pl bench -am)" >&2; exit 2; }
exec java -cp "bench/target/classes:$(cat bench/target/classpath.txt)" org.openjdk.jmh.Main \
  -jvmArgsAppend "-Drdma-actors.test.address=$ADDR" "$@" 'io\.rdmaactors\.jna\.VerbCallCost'
