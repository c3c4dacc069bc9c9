# Shared settings for install.sh / up.sh / down.sh (sourced, not run). Every value can be overridden
# from the environment, so a developer without root can keep everything under $HOME.
OS_VERSION="${OPENSEARCH_VERSION:-2.19.1}"
OS_KNN_VERSION="${OS_VERSION}.0"   # plugin versions must match the server exactly
OS_PORT="${OPENSEARCH_PORT:-9200}"
OS_HEAP="${OPENSEARCH_HEAP:-1g}"
OS_USER="${OPENSEARCH_USER:-ragmesh-opensearch}"
# Downloads (Maven's local repository and the artefacts) live in the cache, which survives clean clones.
OS_CACHE="${RAGMESH_OPENSEARCH_CACHE:-$HOME/.cache/ragmesh/opensearch}"
# The assembled server, its data and its pid file live outside the repository: root's home is not
# readable by the service user, and `make opensearch-down` from another clone must find the same pid file.
if [ "$(id -u)" -eq 0 ]; then
  OS_ROOT="${RAGMESH_OPENSEARCH_ROOT:-/var/lib/ragmesh-opensearch}"
else
  OS_ROOT="${RAGMESH_OPENSEARCH_ROOT:-$HOME/.local/share/ragmesh-opensearch}"
  OS_USER="$(id -un)"
fi
OS_HOME="$OS_ROOT/opensearch-$OS_VERSION"
OS_PIDFILE="$OS_ROOT/run/opensearch.pid"
OS_URL="http://127.0.0.1:$OS_PORT"

log() { printf '[opensearch] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# Prefix that runs a command as the service user (OpenSearch refuses to run as root).
if [ "$(id -u)" -eq 0 ]; then AS_USER=(runuser -u "$OS_USER" --); else AS_USER=(); fi

# OpenSearch 2.19 needs JDK 17 or 21 (it relies on the SecurityManager, gone from 24+): never the
# machine's default JDK, which may be newer.
find_java() {
  local candidate
  for candidate in "${OPENSEARCH_JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-* /usr/lib/jvm/java-21-openjdk-*; do
    if [ -n "$candidate" ] && [ -x "$candidate/bin/java" ]; then echo "$candidate"; return 0; fi
  done
  return 1
}

# True when the pid file names a live OpenSearch process (a recycled pid of something else is not it).
ours_running() {
  local pid
  pid="$(cat "$OS_PIDFILE" 2>/dev/null)" || return 1
  [ -n "$pid" ] && grep -qa org.opensearch.bootstrap.OpenSearch "/proc/$pid/cmdline" 2>/dev/null
}
