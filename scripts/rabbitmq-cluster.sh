#!/usr/bin/env bash
# A real 3-node RabbitMQ cluster of the installed rabbitmq-server on loopback, for failover tests.
# Built from three private nodes of scripts/rabbitmq-node.sh (own node names, ports and data dirs),
# joined with `rabbitmqctl join_cluster`. Never touches the host's broker.
#
#   scripts/rabbitmq-cluster.sh up   [BASENAME] [FIRST_PORT]   fresh cluster; prints its AMQP URLs, one a line
#   scripts/rabbitmq-cluster.sh down [BASENAME]                stop the three nodes and delete their data
#   scripts/rabbitmq-cluster.sh urls [BASENAME] [FIRST_PORT]   print the AMQP URLs again
#
# BASENAME defaults to `cluster`, FIRST_PORT to 5681. Node i (1..3) is rmq-BASENAME-i@localhost with
# AMQP on FIRST_PORT+i-1 and management on FIRST_PORT+i-1+10000 (5681-5683 and 15681-15683 by default);
# guest/guest works from loopback. Stop or start one node with
#   scripts/rabbitmq-node.sh stop BASENAME-2          scripts/rabbitmq-node.sh start BASENAME-2 5682 15682
# (a restarted node rejoins the cluster from its data). RABBITMQ_NODES_DIR is honoured as there.
# A node lost with its disk is replaced as test/faults/cluster-broker.ts `replace` does: `ctl` on a survivor
# forget_cluster_node, a fresh node started and joined, `scripts/rabbitmq-node.sh queues SURVIVOR grow NODE all`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
node_sh="$here/rabbitmq-node.sh"
cmd="${1:-}"
base="${2:-cluster}"
first="${3:-5681}"

urls() {
  for i in 1 2 3; do echo "amqp://guest:guest@127.0.0.1:$((first + i - 1))"; done
}

up() {
  # Fresh data: a node left over from an earlier run may belong to another cluster.
  down
  # Started together: each takes several seconds to boot, and 2 cores are enough for three.
  local pids=()
  for i in 1 2 3; do
    bash "$node_sh" start "$base-$i" "$((first + i - 1))" "$((first + i - 1 + 10000))" >&2 &
    pids+=("$!")
  done
  local failed=0
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  if [ "$failed" = 1 ]; then echo "a cluster node did not start" >&2; down; exit 1; fi
  local seed
  seed="$(bash "$node_sh" nodename "$base-1")"
  for i in 2 3; do
    for step in stop_app reset "join_cluster $seed" start_app; do
      # rabbitmqctl is chatty on stderr while a node joins; show it only when a step fails.
      # shellcheck disable=SC2086
      if ! out="$(bash "$node_sh" ctl "$base-$i" $step 2>&1)"; then
        echo "$base-$i: rabbitmqctl $step failed:" >&2; echo "$out" >&2; exit 1
      fi
    done
  done
  # The AMQP listeners close during stop_app: wait until all three answer again.
  for i in 1 2 3; do
    bash "$node_sh" ctl "$base-$i" await_startup >/dev/null
  done
  local running
  running="$(bash "$node_sh" ctl "$base-1" cluster_status --formatter json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);process.stdout.write(String((j.running_nodes||[]).length))})')"
  if [ "$running" != 3 ]; then echo "cluster $base has $running running nodes, not 3" >&2; exit 1; fi
  echo "cluster $base: 3 nodes running (AMQP $first-$((first + 2)), management $((first + 10000))-$((first + 10002)))" >&2
  urls
}

down() {
  for i in 1 2 3; do bash "$node_sh" reset "$base-$i" >/dev/null 2>&1 & done
  wait
}

case "$cmd" in
  up) up ;;
  down) down ;;
  urls) urls ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
