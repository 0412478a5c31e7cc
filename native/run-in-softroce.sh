#!/bin/bash
# Runs the jna provider's tests against a real rdma-core stack: Soft-RoCE (rxe0) in a qemu guest
# (softroce-vm/vm.sh), for machines without RDMA hardware or an RDMA-capable kernel.
#
# Usage: native/run-in-softroce.sh [--no-build] [JUnit console selectors...]
#   default selector: --select-package io.rdmaactors.jna
# Builds cm-events and core on the host (Maven; MVN="mvn -o" for offline), writes the test class path to
# core/target/test-classpath.txt, then runs the JUnit console launcher inside the guest.
# Reports land in core/target/softroce-reports. Needs softroce-vm/install.sh run once (root).
# Env: MVN (mvn), M2_REPO (~/.m2/repository).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MVN=${MVN:-mvn}
build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi
if [ $build = 1 ]; then
  $MVN -q -B -pl cm-events,core install -DskipTests
  $MVN -q -B -pl core dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile=target/test-classpath.txt
fi
REPO=${M2_REPO:-$HOME/.m2/repository}
LAUNCHER=$REPO/org/junit/platform/junit-platform-console-standalone/1.14.1/junit-platform-console-standalone-1.14.1.jar
if [ ! -f "$LAUNCHER" ]; then
  $MVN -q -B dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:1.14.1
fi
CP=core/target/test-classes:core/target/classes:$(cat core/target/test-classpath.txt)
SELECT=("$@")
[ ${#SELECT[@]} -gt 0 ] || SELECT=(--select-package io.rdmaactors.jna)
# The guest starts clean (env -i): JVM settings travel in the command. C1 and the serial collector
# start fastest under software emulation.
CMD="export JAVA_TOOL_OPTIONS='-XX:TieredStopAtLevel=1 -XX:+UseSerialGC'; ulimit -l unlimited;
rdma link show; java -jar $LAUNCHER execute --disable-banner --disable-ansi-colors --details=tree --class-path $CP \
--reports-dir core/target/softroce-reports $(printf '%q ' "${SELECT[@]}")"
start=$(date +%s)
rc=0
"$ROOT/native/softroce-vm/vm.sh" "$CMD" || rc=$?
echo "softroce guest stage: $(( $(date +%s) - start )) s, exit $rc"
exit $rc
