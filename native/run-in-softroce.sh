#!/bin/bash
# Runs the jna provider's tests against a real rdma-core stack: Soft-RoCE (rxe0) in a qemu guest
# (softroce-vm/vm.sh), for machines without RDMA hardware or an RDMA-capable kernel.
#
# Usage: [MODULE=testkit] native/run-in-softroce.sh [--no-build] [JUnit console selectors...]
#   MODULE core (default): the jna provider's tests, conformance included (io.rdmaactors.jna)
#   MODULE testkit: the actor tests (io.rdmaactors.actors) on the jna fabric
#   MODULE cluster: the cluster tests (io.rdmaactors.cluster) with members in one JVM; the three-JVM
#     test only where selected (--select-class io.rdmaactors.cluster.ThreeProcessesTest)
#   MODULE ffm: the ffm module's tests (io.rdmaactors.ffm), and the jna provider's (conformance
#     included) and the actor tests on the ffm provider; needs Java 22+: JAVA_HOME names it for the
#     build and the guest
# Builds the module and what it needs on the host (Maven; MVN="mvn -o" for offline), writes its test
# class path to <module>/target/test-classpath.txt, then runs the JUnit console launcher inside the
# guest, with rdma-actors on the jna fabric and the tests on the guest's RoCE address.
# Reports land in <module>/target/softroce-reports. Needs softroce-vm/install.sh run once (root).
# Env: MVN (mvn), M2_REPO (~/.m2/repository), MODULE (core), ADDR (10.0.2.15), JAVA_HOME (the guest's
# JVM is $JAVA_HOME/bin/java where set, else java on the PATH).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MVN=${MVN:-mvn}
MODULE=${MODULE:-core}
ADDR=${ADDR:-10.0.2.15}
build=1
if [ "${1:-}" = "--no-build" ]; then build=0; shift; fi
if [ $build = 1 ]; then
  $MVN -q -B -pl "$MODULE" -am install -DskipTests
  $MVN -q -B -pl "$MODULE" dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile=target/test-classpath.txt
fi
REPO=${M2_REPO:-$HOME/.m2/repository}
LAUNCHER=$REPO/org/junit/platform/junit-platform-console-standalone/1.14.1/junit-platform-console-standalone-1.14.1.jar
if [ ! -f "$LAUNCHER" ]; then
  $MVN -q -B dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:1.14.1
fi
# this project's own modules come from their build directories, not from copies installed in the
# local repository (another build may be rewriting those while the guest reads them)
OWN='[^:]*/io/rdmaactors/rdma-actors-([a-z-]+)/[^/:]+/rdma-actors-[a-z-]+-[^/:]+'
DEPS=$(sed -E "s#${OWN}-tests\.jar#\1/target/test-classes#g; s#${OWN}\.jar#\1/target/classes#g" \
  "$MODULE/target/test-classpath.txt")
CP=$MODULE/target/test-classes:$MODULE/target/classes:$DEPS
SELECT=("$@")
if [ ${#SELECT[@]} -eq 0 ]; then
  case $MODULE in
    # 100 connections x 1,000 messages takes too long under emulation
    testkit) SELECT=(--select-package io.rdmaactors.actors --exclude-classname '.*ManyConnectionsTest') ;;
    # four JVMs on the guest's one emulated CPU took 290-520 s of the test's 600 s, and stalled
    # once: the three-JVM test runs on the soft fabric's links between processes in mvn verify
    cluster) SELECT=(--select-package io.rdmaactors.cluster --exclude-classname '.*ThreeProcessesTest') ;;
    ffm) SELECT=(--select-package io.rdmaactors.ffm --select-package io.rdmaactors.jna
          --select-package io.rdmaactors.actors --exclude-classname '.*ManyConnectionsTest') ;;
    *) SELECT=(--select-package io.rdmaactors.jna) ;;
  esac
fi
# The guest starts clean (env -i): JVM settings travel in the command. C1 and the serial collector
# start fastest under software emulation.
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java
# On ffm, the jna and actor tests run on the ffm provider, whose downcalls need native access
# granted (a flag only Java 22+ knows)
PROVIDER=jna; NATIVE_ACCESS=
if [ "$MODULE" = ffm ]; then
  PROVIDER=ffm; NATIVE_ACCESS='--enable-native-access=ALL-UNNAMED -Drdma-actors.test.rdma-core-provider=ffm'
fi
CMD="export JAVA_TOOL_OPTIONS='-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Drdma-actors.fabric=$PROVIDER -Drdma-actors.test.address=$ADDR -Dpekko.logger-startup-timeout=60s $NATIVE_ACCESS'; ulimit -l unlimited;
rdma link show; $JAVA -jar $LAUNCHER execute --disable-banner --disable-ansi-colors --details=tree --class-path $CP \
--reports-dir $MODULE/target/softroce-reports $(printf '%q ' "${SELECT[@]}")"
start=$(date +%s)
rc=0
"$ROOT/native/softroce-vm/vm.sh" "$CMD" || rc=$?
echo "softroce guest stage: $(( $(date +%s) - start )) s, exit $rc"
exit $rc
