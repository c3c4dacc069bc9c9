#!/usr/bin/env bash
# Installs (if needed) and starts the single-node OpenSearch, then waits for yellow/green health.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"
# OPENSEARCH_NODES=2: the two-node cluster on loopback instead (pair.sh).
if [ "${OPENSEARCH_NODES:-1}" = 2 ]; then exec bash "$here/pair.sh" up; fi
start_timeout="${OPENSEARCH_START_TIMEOUT:-180}"

healthy() { curl -sf "$OS_URL/_cluster/health?wait_for_status=yellow&timeout=2s" >/dev/null; }
show_log() { tail -n 40 "$OS_ROOT/logs/console.log" 2>/dev/null | grep -v '^WARNING' >&2 || true; }

# Two concurrent `make opensearch-up` would start two nodes on one data directory.
mkdir -p "$OS_ROOT"
exec 9>"$OS_ROOT/.up.lock"
flock 9

if ours_running; then
  log "already running (pid $(cat "$OS_PIDFILE"))"
  healthy || log "waiting for health"
elif curl -s -o /dev/null "$OS_URL"; then
  die "something else already answers on $OS_URL; stop it or set OPENSEARCH_PORT"
else
  bash "$here/install.sh"
  rm -f "$OS_PIDFILE"
  log "starting on $OS_URL as $OS_USER (heap $OS_HEAP)"
  started=$(date +%s)
  # Started in the foreground mode of bin/opensearch, put in the background here: the launcher pid
  # ($!) lives exactly as long as the node, which tells a crash during start-up from a slow start.
  # The node writes its own pid to the pid file that down.sh uses. Its std streams go to a file, not
  # to the caller's pipe (a CI runner or $(...) would wait for the node to exit), and setsid keeps
  # the caller's Ctrl-C and process-group kills away from it.
  # fd 9 (the lock) is closed so that the node does not hold it.
  (cd "$OS_HOME" && exec 9>&- && exec setsid "${AS_USER[@]}" env OPENSEARCH_JAVA_HOME="$(find_java)" \
      OPENSEARCH_TMPDIR="$OS_ROOT/tmp" "$OS_HOME/bin/opensearch" -p "$OS_PIDFILE" \
      </dev/null >"$OS_ROOT/logs/console.log" 2>&1) &
  launcher=$!
fi

deadline=$(( $(date +%s) + start_timeout ))
until healthy; do
  if [ -n "${launcher:-}" ] && ! kill -0 "$launcher" 2>/dev/null; then
    show_log
    die "the node exited during start-up (log: $OS_ROOT/logs/ragmesh.log)"
  fi
  [ "$(date +%s)" -lt "$deadline" ] || { show_log; die "not healthy after ${start_timeout}s"; }
  sleep 1
done
log "healthy at $OS_URL (pid $(cat "$OS_PIDFILE" 2>/dev/null)${started:+, started in $(( $(date +%s) - started ))s})"
