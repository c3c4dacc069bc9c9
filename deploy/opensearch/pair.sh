#!/usr/bin/env bash
# Two OpenSearch nodes on loopback, one cluster: `OPENSEARCH_NODES=2 make opensearch-up` (up.sh hands over to
# this script), `OPENSEARCH_NODES=2 make opensearch-down`. The scale-out path tried on one machine:
#   node 1 (ragmesh-1): cluster manager + data, HTTP $OS_PORT (9200), transport $OPENSEARCH_TRANSPORT_PORT (9300)
#   node 2 (ragmesh-2): data only, HTTP $OS_PORT+1, transport +1
# ragmesh's chunk index gets 1 shard and 1 replica here (RAGMESH_OPENSEARCH_SHARDS=1, RAGMESH_OPENSEARCH_REPLICAS=1,
# what the Helm chart sets for a cluster): the primary and its copy live on different nodes, so either data node can
# go down without losing a document. Node 1 alone holds the cluster state: losing it stops the cluster (a
# production cluster has three manager-eligible nodes).
#   pair.sh up            install (once), start whichever node is not running, wait for green
#   pair.sh down          stop both (node 2 first)
#   pair.sh kill N        kill -9 node N (a fault drill)
#   pair.sh start N       start node N again and wait until the cluster is green
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
transport="${OPENSEARCH_TRANSPORT_PORT:-9300}"
start_timeout="${OPENSEARCH_START_TIMEOUT:-240}"

node_dir() { echo "$OS_ROOT/node-$1"; }
node_pidfile() { echo "$OS_ROOT/run/opensearch-$1.pid"; }
node_pid() { cat "$(node_pidfile "$1")" 2>/dev/null || true; }
node_running() {
  local pid
  pid="$(node_pid "$1")"
  [ -n "$pid" ] && grep -qa org.opensearch.bootstrap.OpenSearch "/proc/$pid/cmdline" 2>/dev/null
}
green() {
  curl -sf "$OS_URL/_cluster/health?wait_for_status=green&wait_for_nodes=2&timeout=2s" >/dev/null
}

configure() {  # N: the node's own config folder (a copy of the server's), data and logs
  local n="$1" dir roles
  dir="$(node_dir "$n")"
  mkdir -p "$dir/data" "$dir/logs" "$OS_ROOT/run" "$OS_ROOT/tmp"
  rm -rf "$dir/config.new"
  cp -r "$OS_HOME/config" "$dir/config.new"
  # A keystore the node wrote on an earlier start is kept.
  [ -f "$dir/config/opensearch.keystore" ] && cp "$dir/config/opensearch.keystore" "$dir/config.new/"
  rm -rf "$dir/config"
  mv "$dir/config.new" "$dir/config"
  if [ "$n" -eq 1 ]; then roles='[cluster_manager, data, ingest]'; else roles='[data, ingest]'; fi
  cat >"$dir/config/opensearch.yml" <<YAML
cluster.name: ragmesh-pair
node.name: ragmesh-$n
node.roles: $roles
network.host: 127.0.0.1
http.port: $(( OS_PORT + n - 1 ))
transport.port: $(( transport + n - 1 ))
discovery.seed_hosts: ["127.0.0.1:$transport"]
cluster.initial_cluster_manager_nodes: ["ragmesh-1"]
path.data: $dir/data
path.logs: $dir/logs
cluster.routing.allocation.disk.threshold_enabled: false
YAML
  [ "$(id -u)" -eq 0 ] && chown -R "$OS_USER:" "$dir" "$OS_ROOT/run" "$OS_ROOT/tmp"
  return 0
}

start_node() {  # N: in the background, as up.sh starts the single node (setsid, own log, lock fd closed)
  local n="$1" dir
  dir="$(node_dir "$n")"
  if node_running "$n"; then log "node $n already running (pid $(node_pid "$n"))"; return 0; fi
  configure "$n"
  rm -f "$(node_pidfile "$n")"
  log "starting node $n on 127.0.0.1:$(( OS_PORT + n - 1 ))"
  (cd "$OS_HOME" && exec 9>&- && exec setsid "${AS_USER[@]}" env OPENSEARCH_JAVA_HOME="$(find_java)" \
      OPENSEARCH_PATH_CONF="$dir/config" OPENSEARCH_TMPDIR="$OS_ROOT/tmp" "$OS_HOME/bin/opensearch" \
      -p "$(node_pidfile "$n")" </dev/null >"$dir/logs/console.log" 2>&1) &
}

wait_green() {
  local deadline started
  started=$(date +%s)
  deadline=$(( started + start_timeout ))
  until green; do
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 20 "$(node_dir 2)/logs/console.log" >&2 || true; die "not green after ${start_timeout}s"; }
    sleep 1
  done
  log "green: 2 nodes at $OS_URL (waited $(( $(date +%s) - started ))s)"
}

stop_node() {
  local n="$1" pid
  pid="$(node_pid "$n")"
  node_running "$n" || { rm -f "$(node_pidfile "$n")"; return 0; }
  log "stopping node $n (pid $pid)"
  kill -TERM "$pid"
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || { rm -f "$(node_pidfile "$n")"; return 0; }; sleep 1; done
  kill -KILL "$pid"
  rm -f "$(node_pidfile "$n")"
}

mkdir -p "$OS_ROOT"
exec 9>"$OS_ROOT/.up.lock"
flock 9
case "${1:-up}" in
  up)
    if ! node_running 1 && curl -s -o /dev/null "$OS_URL"; then
      die "something else already answers on $OS_URL (the single node? make opensearch-down first)"
    fi
    bash "$here/install.sh"
    start_node 1
    start_node 2
    wait_green ;;
  down) stop_node 2; stop_node 1 ;;
  kill)
    pid="$(node_pid "${2:?node number}")"
    node_running "$2" || die "node $2 is not running"
    log "kill -9 node $2 (pid $pid)"
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done ;;
  start) start_node "${2:?node number}"; wait_green ;;
  *) die "usage: pair.sh up|down|kill N|start N" ;;
esac
