#!/bin/bash
# JMH (ffm module, VerbCallCostFfm): poll_cq, req_notify_cq and a posted-and-polled RDMA WRITE
# through FFM downcalls on the ops pointers against the jna provider's direct mapping of the same
# pointers, beside each binding's empty call. Needs an RDMA device and Java 22+; run it inside the
# Soft-RoCE guest:
#   JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 MODULE=ffm native/run-in-softroce.sh   # builds ffm
#   RXE_VM_TCG_THREAD=multi native/softroce-vm/vm.sh \
#     'JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 native/ffm-call-cost.sh'
# or on a host with RDMA hardware (ADDR=its address). Extra arguments go to JMH (e.g. -wi 5 -i 10).
# Several TCG threads: on one, the busy poll starves rxe's kernel work and a WRITE's round trip
# varies by milliseconds. C2 only: there, C1 code patched while other threads ran it crashed the
# JVM once (SIGILL), as latency-vs-perftest.sh notes for SIGSEGV.
set -euo pipefail
cd "$(dirname "$0")/.."
ADDR=${ADDR:-10.0.2.15}
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
ulimit -l unlimited 2>/dev/null || true
[ -f ffm/target/test-classes/META-INF/BenchmarkList ] && [ -f ffm/target/test-classpath.txt ] ||
  { echo "build the ffm module first (JAVA_HOME=<JDK 22+> MODULE=ffm native/run-in-softroce.sh)" >&2; exit 2; }
exec "$JAVA" -cp "ffm/target/test-classes:ffm/target/classes:$(cat ffm/target/test-classpath.txt)" \
  org.openjdk.jmh.Main -jvmArgsAppend "-Drdma-actors.test.address=$ADDR -XX:+UseSerialGC -XX:-TieredCompilation --enable-native-access=ALL-UNNAMED" "$@" 'io\.rdmaactors\.ffm\.binding\.VerbCallCostFfm'
