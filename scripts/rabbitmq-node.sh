#!/usr/bin/env bash
# A private RabbitMQ node of the installed rabbitmq-server, on its own ports and data dir, for tests that
# hurt a broker (stop it, restart it, set alarms, cluster it, give it TLS) without touching the shared one.
#
#   scripts/rabbitmq-node.sh start NAME AMQP_PORT [MGMT_PORT]   start node rmq-NAME@localhost, wait until it answers
#   scripts/rabbitmq-node.sh stop NAME                          stop it (its data stays)
#   scripts/rabbitmq-node.sh reset NAME                         stop it and delete its data
#   scripts/rabbitmq-node.sh ctl NAME ARGS...                   rabbitmqctl -n rmq-NAME@localhost ARGS...
#   scripts/rabbitmq-node.sh queues NAME ARGS...                rabbitmq-queues -n rmq-NAME@localhost ARGS... (quorum members)
#   scripts/rabbitmq-node.sh nodename NAME                      prints rmq-NAME@localhost
#
# Environment:
#   RABBITMQ_NODES_DIR         where nodes keep data, config and logs (default /tmp/rabbitmq-nodes)
#   RABBITMQ_NODE_EXTRA_CONF   extra rabbitmq.conf lines (e.g. a TLS listener), used by `start`
#   RABBITMQ_NODE_DIST_PORT    Erlang distribution port (default AMQP_PORT + 20000)
#   RABBITMQ_NODE_PLUGINS      more plugins to enable, comma-separated (e.g. rabbitmq_consistent_hash_exchange)
# Each node gets guest/guest with loopback_users = none. The Erlang cookie is the host broker's, so nodes
# of one machine can be clustered (`ctl NAME join_cluster rmq-OTHER@localhost`).
set -euo pipefail
BASE="${RABBITMQ_NODES_DIR:-/tmp/rabbitmq-nodes}"
SERVER=/usr/lib/rabbitmq/bin/rabbitmq-server
CTL=/usr/lib/rabbitmq/bin/rabbitmqctl
QUEUES=/usr/lib/rabbitmq/bin/rabbitmq-queues
COOKIE_HOME=/var/lib/rabbitmq

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
usage() { sed -n '2,18p' "$0" >&2; exit 2; }
nodename() { echo "rmq-$1@localhost"; }
ctl() {
  local name="$1"; shift
  HOME="$COOKIE_HOME" RABBITMQ_CONF_ENV_FILE=/dev/null "$CTL" -n "$(nodename "$name")" "$@"
}
queues() {
  local name="$1"; shift
  HOME="$COOKIE_HOME" RABBITMQ_CONF_ENV_FILE=/dev/null "$QUEUES" -n "$(nodename "$name")" "$@"
}

start() {
  local name="$1" amqp_port="$2" mgmt_port="${3:-}"
  local dir="$BASE/$name"
  [ -x "$SERVER" ] || { echo "rabbitmq-server is not installed (apt-get install rabbitmq-server)" >&2; exit 1; }
  if port_open "$amqp_port"; then
    if ctl "$name" status >/dev/null 2>&1; then echo "$(nodename "$name") already runs on $amqp_port"; return 0; fi
    echo "port $amqp_port is taken by something else" >&2; exit 1
  fi
  mkdir -p "$dir/mnesia" "$dir/log"
  {
    echo "loopback_users = none"
    echo "listeners.tcp.default = 127.0.0.1:$amqp_port"
    [ -n "$mgmt_port" ] && echo "management.tcp.port = $mgmt_port" && echo "management.tcp.ip = 127.0.0.1"
    [ -n "${RABBITMQ_NODE_EXTRA_CONF:-}" ] && printf '%s\n' "$RABBITMQ_NODE_EXTRA_CONF"
    true
  } > "$dir/rabbitmq.conf"
  local plugins="${RABBITMQ_NODE_PLUGINS:-}"
  [ -n "$mgmt_port" ] && plugins="rabbitmq_management${plugins:+,$plugins}"
  echo "[$plugins]." > "$dir/enabled_plugins"
  # The host's rabbitmq-env.conf names the host's node: ignore it, say everything here.
  HOME="$COOKIE_HOME" \
    RABBITMQ_CONF_ENV_FILE=/dev/null \
    RABBITMQ_NODENAME="$(nodename "$name")" \
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 \
    RABBITMQ_NODE_PORT="$amqp_port" \
    RABBITMQ_DIST_PORT="${RABBITMQ_NODE_DIST_PORT:-$((amqp_port + 20000))}" \
    RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
    RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
    RABBITMQ_MNESIA_BASE="$dir/mnesia" \
    RABBITMQ_LOG_BASE="$dir/log" \
    RABBITMQ_PID_FILE="$dir/pid" \
    ERL_EPMD_ADDRESS=127.0.0.1 \
    "$SERVER" -detached >"$dir/log/start.out" 2>&1
  for _ in $(seq 1 120); do
    if port_open "$amqp_port" && { [ -z "$mgmt_port" ] || port_open "$mgmt_port"; }; then
      echo "$(nodename "$name") answers on $amqp_port${mgmt_port:+ (management $mgmt_port)}"
      return 0
    fi
    sleep 0.5
  done
  echo "$(nodename "$name") did not start; see $dir/log" >&2
  exit 1
}

stop() {
  local name="$1"
  ctl "$name" stop >/dev/null 2>&1 || true
}

case "${1:-}" in
  start) [ $# -ge 3 ] || usage; start "$2" "$3" "${4:-}" ;;
  stop) [ $# -eq 2 ] || usage; stop "$2" ;;
  reset) [ $# -eq 2 ] || usage; stop "$2"; rm -rf "${BASE:?}/$2" ;;
  ctl) [ $# -ge 3 ] || usage; name="$2"; shift 2; ctl "$name" "$@" ;;
  queues) [ $# -ge 3 ] || usage; name="$2"; shift 2; queues "$name" "$@" ;;
  nodename) [ $# -eq 2 ] || usage; nodename "$2" ;;
  *) usage ;;
esac
