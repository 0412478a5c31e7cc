#!/bin/bash
# Send/receive ping-pong latency on the jna provider, through the bare SPI (bench JnaPingPong) and
# through the actors (bench ActorPingPongLatency), against rdma-core's own ib_send_lat -R
# (perftest), interleaved, on one RDMA device: server and client of each on ADDR.
# Runs where an RDMA device is: inside the Soft-RoCE guest, on multi-threaded TCG (on one TCG
# thread, the busy-polling sides take turns of milliseconds)
#   RXE_VM_TCG_THREAD=multi native/softroce-vm/vm.sh 'native/latency-vs-perftest.sh'
# or on a host with RDMA hardware (ADDR=its address, DEV=its device).
# Needs the bench built on the host first:
#   mvn -B -o install -DskipTests -pl cm-events,core,actors && mvn -B -o package -DskipTests -pl bench
# All report half the round trip (ib_send_lat's convention) and t_typical is the median; prints each
# run, the median t_typical of each over the rounds, and the ratios to perftest's.
# With FFM_JAVA_HOME (a JDK 22+; the ffm module built: JAVA_HOME=<it> MODULE=ffm native/run-in-softroce.sh)
# JnaPingPong also runs on the ffm provider (post, poll and arm through FFM) in each round.
# Env: ADDR (10.0.2.15), DEV (rxe0), SIZE (64), ITERS (10000 measured round trips per run),
#      WARMUP (20000, Java only: the JIT's), ROUNDS (3 runs of each), PORT (18515, first perftest port),
#      JAVA_OPTS (-XX:+UseSerialGC -XX:-TieredCompilation -Dpekko.logger-startup-timeout=60s: C2 only,
#      so fewer recompilations patch code while both threads spin, as one SIGILL in patched C1 code
#      was seen under qemu's emulation; Pekko's logger once took longer than its 5 s to start there).
# ib_send_lat asks for inline sends (-I SIZE), as JnaPingPong does; the actors copy into registered
# buffers and do not send inline. The perftest log shows the inline size the device granted.
set -euo pipefail
cd "$(dirname "$0")/.."
ADDR=${ADDR:-10.0.2.15}
DEV=${DEV:-rxe0}
SIZE=${SIZE:-64}
ITERS=${ITERS:-10000}
WARMUP=${WARMUP:-20000}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18515}
JAVA_OPTS=${JAVA_OPTS:--XX:+UseSerialGC -XX:-TieredCompilation -Dpekko.logger-startup-timeout=60s}
ulimit -l unlimited 2>/dev/null || true
[ -f bench/target/classes/io/rdmaactors/bench/JnaPingPong.class ] && [ -f bench/target/classpath.txt ] ||
  { echo "build the bench first (mvn -B -o package -DskipTests -pl bench)" >&2; exit 2; }
CP="bench/target/classes:$(cat bench/target/classpath.txt)"
LOG=$(mktemp -d)
trap 'rm -rf "$LOG"' EXIT

# The data row of a latency table: "#bytes #iterations t_min t_max t_typical ...": prints t_typical.
typical() { awk -v s="$SIZE" -v n="$ITERS" '$1 == s && $2 == n && NF >= 8 { print $5; exit }' "$1"; }

java_run() {  # $1: round, $2: main class, $3...: its extra options; prints t_typical
  local out=$LOG/java-$1-$2${3:-} main=$2 java=java cp=$CP opts=$JAVA_OPTS
  shift 2
  if [ "${1:-}" = --provider=ffm ]; then
    java=$FFM_JAVA_HOME/bin/java cp=$CP:ffm/target/classes opts="$JAVA_OPTS --enable-native-access=ALL-UNNAMED"
  fi
  # shellcheck disable=SC2086
  "$java" $opts -cp "$cp" "io.rdmaactors.bench.$main" --address="$ADDR" --size="$SIZE" \
    --iterations="$ITERS" --warmup="$WARMUP" "$@" > "$out" 2>&1 || { sed "s/^/  $main | /" "$out" >&2; return 1; }
  sed "s/^/  $main | /" "$out" >&2
  typical "$out"
}

perftest_run() {  # $1: round; prints t_typical
  local port=$((PORT + $1)) out=$LOG/perftest-$1 server
  ib_send_lat -R -F -d "$DEV" -s "$SIZE" -I "$SIZE" -n "$ITERS" -p "$port" > "$LOG/server-$1" 2>&1 &
  server=$!
  sleep 2
  # the server takes a while to listen under emulation: the client is refused until then
  for attempt in $(seq 1 30); do
    if ib_send_lat -R -F -d "$DEV" -s "$SIZE" -I "$SIZE" -n "$ITERS" -p "$port" "$ADDR" > "$out" 2>&1; then break; fi
    [ "$attempt" = 30 ] && { sed 's/^/  perftest | /' "$out" >&2; kill "$server" 2>/dev/null; return 1; }
    sleep 1
  done
  wait "$server" || { sed 's/^/  server   | /' "$LOG/server-$1" >&2; return 1; }
  sed 's/^/  perftest | /' "$out" >&2
  typical "$out"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "== latency: jna provider (JnaPingPong, ActorPingPongLatency) vs ib_send_lat -R; $SIZE bytes, $ITERS round trips per run, $ROUNDS runs each, on $DEV ($ADDR)"
java -version 2>&1 | head -1
ib_send_lat --version 2>&1 | head -1 || true
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
JAVA=() ACTORS=() PERF=() FFM=()
for r in $(seq 1 "$ROUNDS"); do
  # rotate which goes first, so none always runs on a warmer (or busier) machine
  case $((r % 3)) in
    1) j=$(java_run "$r" JnaPingPong); a=$(java_run "$r" ActorPingPongLatency --fabric=jna); p=$(perftest_run "$r") ;;
    2) p=$(perftest_run "$r"); j=$(java_run "$r" JnaPingPong); a=$(java_run "$r" ActorPingPongLatency --fabric=jna) ;;
    0) a=$(java_run "$r" ActorPingPongLatency --fabric=jna); p=$(perftest_run "$r"); j=$(java_run "$r" JnaPingPong) ;;
  esac
  [ -n "$j" ] && [ -n "$a" ] && [ -n "$p" ] ||
    { echo "round $r: no t_typical parsed (java '$j', actors '$a', perftest '$p')"; exit 1; }
  JAVA+=("$j"); ACTORS+=("$a"); PERF+=("$p")
  echo "round $r: t_typical java $j us, actors $a us, perftest $p us; java/perftest $(ratio "$j" "$p"), actors/perftest $(ratio "$a" "$p")"
  if [ -n "${FFM_JAVA_HOME:-}" ]; then
    f=$(java_run "$r" JnaPingPong --provider=ffm)
    [ -n "$f" ] || { echo "round $r: no t_typical parsed for java (ffm)"; exit 1; }
    FFM+=("$f")
    echo "round $r: t_typical java (ffm) $f us; ffm/perftest $(ratio "$f" "$p"), ffm/jna $(ratio "$f" "$j")"
  fi
done
jm=$(printf '%s\n' "${JAVA[@]}" | median)
am=$(printf '%s\n' "${ACTORS[@]}" | median)
pm=$(printf '%s\n' "${PERF[@]}" | median)
echo "SUMMARY latency-vs-perftest: $SIZE-byte send/recv, t_typical (median of $ROUNDS runs, half round trip):" \
  "java (jna) $jm us, actors (jna) $am us, ib_send_lat $pm us; java/perftest $(ratio "$jm" "$pm")," \
  "actors/perftest $(ratio "$am" "$pm")"
if [ ${#FFM[@]} -gt 0 ]; then
  fm=$(printf '%s\n' "${FFM[@]}" | median)
  echo "SUMMARY latency-vs-perftest (ffm): java (ffm) $fm us; ffm/perftest $(ratio "$fm" "$pm"), ffm/jna $(ratio "$fm" "$jm")"
fi
