#!/bin/bash
# rdma-core's mckey against rdma-actors' multicast program, both directions, on the jna provider
# (FABRIC=ffm: the ffm provider, see examples-command.sh):
# mckey sends to a group our receiver joined, then our sender sends to a group mckey joined. Runs
# where an RDMA device is: inside the Soft-RoCE guest (native/softroce-vm/vm.sh
# 'native/mckey-interop.sh'), or on a host with RDMA hardware. Needs the examples built on the
# host first (mvn -B package -DskipTests).
# Env: ADDR (the device's IPv4 address; 10.0.2.15 in the guest), GROUP (239.1.2.3), COUNT (10),
# SIZE (100, mckey's default), FABRIC (jna).
set -euo pipefail
cd "$(dirname "$0")/.."
ADDR=${ADDR:-10.0.2.15}
GROUP=${GROUP:-239.1.2.3}
COUNT=${COUNT:-10}
SIZE=${SIZE:-100}
source native/examples-command.sh
JAVA_MC=("${EXAMPLES[@]}" multicast --fabric "$FABRIC" -m "$GROUP" -b "$ADDR"
  -C "$COUNT" -S "$SIZE")
log=$(mktemp)

# waits until $1's output in $2 says it joined, or fails
await_join() {
  for attempt in $(seq 1 120); do
    if grep -q "$1" "$2"; then return 0; fi
    sleep 0.5
  done
  echo "never joined: $(cat "$2")"; exit 1
}

echo "== mckey sender, rdma-actors receiver"
"${JAVA_MC[@]}" --no-verify --timeout 30 > "$log" 2>&1 &
receiver=$!
await_join "receiver: joined" "$log"
mckey -m "$GROUP" -b "$ADDR" -s -C "$COUNT" -S "$SIZE"
wait "$receiver" || { cat "$log"; exit 1; }
cat "$log"

echo "== rdma-actors sender, mckey receiver"
# mckey writes to a file in blocks: line buffering lets its "joined" line be seen
stdbuf -oL mckey -m "$GROUP" -b "$ADDR" -C "$COUNT" -S "$SIZE" > "$log" 2>&1 &
receiver=$!
await_join "mckey: joined" "$log"
"${JAVA_MC[@]}" -s
wait "$receiver" || { cat "$log"; exit 1; }
cat "$log"
echo "mckey interop ($FABRIC): both directions, $COUNT datagrams of $SIZE bytes each"
