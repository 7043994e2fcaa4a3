#!/usr/bin/env bash
# Runs a Debian RabbitMQ 4 beside the host's broker, from a debootstrap root cached outside the
# repository, for the broker matrix:
#   4.0 (default): Debian trixie's 4.0.5 — AMQP 5673, management 15673, node rabbit4@localhost
#   4.3:           Debian forky's 4.3.6 (debootstrap's sid script) — AMQP 5674, management 15674, node rabbit43@localhost
#   scripts/rabbitmq4.sh up [4.0|4.3]     build the root if missing (30-80 s), start, wait until it answers
#   scripts/rabbitmq4.sh down [4.0|4.3]   stop it and unmount
# Then: AMQP_URL=amqp://guest:guest@127.0.0.1:5673 RABBITMQ_MANAGEMENT_URL=http://127.0.0.1:15673 npm test
set -euo pipefail
VERSION="${2:-4.0}"
case "$VERSION" in
  4.0) SUITE=trixie; SCRIPT=trixie; NODE=rabbit4; DEFAULT_ROOT=/var/cache/rmq4/root; P=5673 ;;
  4.3) SUITE=forky; SCRIPT=sid; NODE=rabbit43; DEFAULT_ROOT=/var/cache/rmq43/root; P=5674 ;;
  *) echo "unknown version $VERSION (4.0 or 4.3)" >&2; exit 2 ;;
esac
if [ "$VERSION" = 4.0 ]; then
  ROOT="${RABBITMQ4_ROOT:-$DEFAULT_ROOT}"
  AMQP_PORT="${RABBITMQ4_PORT:-$P}"
  MGMT_PORT="${RABBITMQ4_MANAGEMENT_PORT:-1$P}"
  DIST_PORT="${RABBITMQ4_DIST_PORT:-2$P}"
else
  ROOT="${RABBITMQ43_ROOT:-$DEFAULT_ROOT}"
  AMQP_PORT="${RABBITMQ43_PORT:-$P}"
  MGMT_PORT="${RABBITMQ43_MANAGEMENT_PORT:-1$P}"
  DIST_PORT="${RABBITMQ43_DIST_PORT:-2$P}"
fi

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
in_root() { chroot "$ROOT" env HOME=/var/lib/rabbitmq PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

up() {
  if [ ! -x "$ROOT/usr/sbin/rabbitmq-server" ]; then
    command -v debootstrap >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
    mkdir -p "$(dirname "$ROOT")"
    debootstrap --variant=minbase --include=rabbitmq-server "$SUITE" "$ROOT" http://deb.debian.org/debian "/usr/share/debootstrap/scripts/$SCRIPT" >/dev/null
  fi
  # Erlang's distribution resolves the node's host: newer roots come without /etc/hosts.
  [ -s "$ROOT/etc/hosts" ] || printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$ROOT/etc/hosts"
  mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
  mountpoint -q "$ROOT/dev" || mount --bind /dev "$ROOT/dev"
  cat > "$ROOT/etc/rabbitmq/rabbitmq-env.conf" <<CONF
NODENAME=$NODE@localhost
NODE_PORT=$AMQP_PORT
DIST_PORT=$DIST_PORT
CONF
  cat > "$ROOT/etc/rabbitmq/rabbitmq.conf" <<CONF
loopback_users = none
listeners.tcp.default = $AMQP_PORT
management.tcp.port = $MGMT_PORT
CONF
  echo '[rabbitmq_management].' > "$ROOT/etc/rabbitmq/enabled_plugins"
  if ! port_open "$AMQP_PORT"; then
    in_root sh -c 'rabbitmq-server > /var/log/rabbitmq/matrix-start.log 2>&1 &'
  fi
  for _ in $(seq 1 120); do
    port_open "$AMQP_PORT" && curl -sf -u guest:guest "http://127.0.0.1:$MGMT_PORT/api/overview" >/dev/null 2>&1 && break
    sleep 1
  done
  curl -sf -u guest:guest "http://127.0.0.1:$MGMT_PORT/api/overview" | grep -o '"rabbitmq_version":"[^"]*"' || { echo "RabbitMQ $VERSION did not start; see $ROOT/var/log/rabbitmq/"; exit 1; }
}

down() {
  if port_open "$AMQP_PORT"; then in_root rabbitmqctl -n "$NODE@localhost" stop >/dev/null 2>&1 || true; fi
  for _ in $(seq 1 30); do port_open "$AMQP_PORT" || break; sleep 1; done
  # The node's helper processes exit a moment after it stops: retry, then detach lazily.
  for m in dev proc; do
    for _ in $(seq 1 10); do mountpoint -q "$ROOT/$m" || break; umount "$ROOT/$m" 2>/dev/null || sleep 1; done
    if mountpoint -q "$ROOT/$m"; then umount -l "$ROOT/$m"; fi
  done
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  *) echo "usage: $0 up|down [4.0|4.3]" >&2; exit 2 ;;
esac
