#!/bin/bash
# rdma-core's rping against rdma-actors' rping-compatible program, both roles, on the jna
# provider (FABRIC=ffm: the ffm provider, see examples-command.sh). Runs where an RDMA device is: inside the Soft-RoCE guest
# (native/softroce-vm/vm.sh 'native/rping-interop.sh'), or on a host with RDMA hardware.
# Needs the examples built on the host first (mvn -B package -DskipTests).
# Env: ADDR (the device's IPv4 address; 10.0.2.15 in the guest), COUNT (100), SIZE (64), FABRIC (jna).
set -euo pipefail
cd "$(dirname "$0")/.."
ADDR=${ADDR:-10.0.2.15}
COUNT=${COUNT:-100}
SIZE=${SIZE:-64}
source native/examples-command.sh
JAVA_RPING=("${EXAMPLES[@]}" rping --fabric "$FABRIC" -a "$ADDR" -C "$COUNT" -S "$SIZE")

echo "== rdma-actors server, rping client"
"${JAVA_RPING[@]}" -s -p 7174 &
server=$!
ok=0
# the JVM takes a while to listen: rping is refused until then
for attempt in $(seq 1 60); do
  if rping -c -a "$ADDR" -p 7174 -C "$COUNT" -S "$SIZE" -V; then ok=1; break; fi
  sleep 1
done
wait "$server"
[ $ok = 1 ] || { echo "rping client never completed against the rdma-actors server"; exit 1; }

echo "== rping server, rdma-actors client"
rping -s -a "$ADDR" -p 7175 -C "$COUNT" -S "$SIZE" &
server=$!
sleep 1
"${JAVA_RPING[@]}" -c -p 7175
wait "$server"
echo "rping interop ($FABRIC): both roles, $COUNT pings of $SIZE bytes each, data verified"
