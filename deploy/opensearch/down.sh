#!/usr/bin/env bash
# Stops the node up.sh started: only the pid in its pid file, and only if that pid is OpenSearch.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
# OPENSEARCH_NODES=2: the two-node cluster on loopback instead (pair.sh).
if [ "${OPENSEARCH_NODES:-1}" = 2 ]; then exec bash "$here/pair.sh" down; fi

pid="$(cat "$OS_PIDFILE" 2>/dev/null || true)"
if ! ours_running; then
  log "not running"
  rm -f "$OS_PIDFILE"
  exit 0
fi
log "stopping pid $pid"
kill -TERM "$pid"
for _ in $(seq 60); do
  kill -0 "$pid" 2>/dev/null || { rm -f "$OS_PIDFILE"; log "stopped"; exit 0; }
  sleep 1
done
log "pid $pid ignored SIGTERM for 60s; killing it"
kill -KILL "$pid"
rm -f "$OS_PIDFILE"
