#!/usr/bin/env bash
# Installs a single-node OpenSearch + k-NN plugin from Maven Central, idempotently.
# Downloads are cached in $OS_CACHE; the assembled server lives in $OS_ROOT (see env.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/env.sh"

apt_install() {
  [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null || die "missing $*; install it (Debian: apt-get install $*)"
  log "installing $* from Debian"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

find_java >/dev/null || apt_install openjdk-17-jre-headless
find_java >/dev/null || die "no JDK 17/21 found; set OPENSEARCH_JAVA_HOME"
command -v mvn >/dev/null || apt_install maven
command -v unzip >/dev/null || apt_install unzip

# ---- downloads (Maven's ordinary client; -C fails on a checksum mismatch) ------------------------
dist="$OS_CACHE/dist-$OS_VERSION"
mvn_q() {  # quiet unless it fails (Maven 3.8 prints colour resets even with -q)
  local out
  out="$(JAVA_HOME="$(find_java)" mvn -B -q -C -Dmaven.repo.local="$OS_CACHE/m2" "$@" 2>&1)" \
    || { printf '%s\n' "$out" >&2; die "mvn $* failed"; }
}
fetch_zip() {  # GROUP:ARTIFACT:VERSION -> $dist/ARTIFACT-VERSION.zip
  local coords="$1" name
  name="$(cut -d: -f2 <<<"$coords")-$(cut -d: -f3 <<<"$coords").zip"
  [ -s "$dist/$name" ] && return 0
  log "downloading $coords:zip"
  mvn_q org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
    -Dartifact="$coords:zip" -DoutputDirectory="$dist/.partial"
  mv "$dist/.partial/$name" "$dist/$name"
}
fetch_module() {  # NAME -> $dist/modules/NAME/*.jar (the module jar and its runtime dependencies)
  local name="$1"
  [ -e "$dist/modules/$name/.complete" ] && return 0
  log "downloading module $name $OS_VERSION and its runtime jars"
  rm -rf "$dist/modules/$name"
  mvn_q -f "$here/module-pom.xml" -Dopensearch.version="$OS_VERSION" -Dmodule.artifact="$name" \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$dist/modules/$name"
  touch "$dist/modules/$name/.complete"
}
# lang-painless: k-NN extends it. analysis-common: the `english` analyzer (stemmer, stop filters).
MODULES=(lang-painless analysis-common)
mkdir -p "$dist"
fetch_zip "org.opensearch.distribution.integ-test-zip:opensearch:$OS_VERSION"
fetch_zip "org.opensearch.plugin:opensearch-knn:$OS_KNN_VERSION"
for module in "${MODULES[@]}"; do fetch_module "$module"; done
rm -rf "$dist/.partial"

# ---- assemble the server (once per version) -----------------------------------------------------
add_module() {  # HOME NAME: what the module's own build would put in modules/NAME
  local home="$1" name="$2" dir="$1/modules/$2" jar entry extends=""
  mkdir -p "$dir"
  # Its jars minus those the server already has in lib/ (the Maven tree includes the whole server).
  for jar in "$dist/modules/$name"/*.jar; do
    [ -e "$home/lib/$(basename "$jar")" ] || cp "$jar" "$dir/"
  done
  # The entry class differs across lines (PainlessPlugin in 2.x, PainlessModulePlugin later): read it.
  entry="$(unzip -Z1 "$dir/$name-$OS_VERSION.jar" | grep -E '^org/opensearch/.*Plugin\.class$')" \
    && [ "$(wc -l <<<"$entry")" -eq 1 ] || die "no single plugin class in $name-$OS_VERSION.jar"
  entry="${entry%.class}"
  case "$name" in
    lang-painless)  # it compiles scripts into classes loaded by its own class loader
      printf 'grant {\n  permission java.lang.RuntimePermission "createClassLoader";\n  %s\n};\n' \
        'permission java.lang.RuntimePermission "getClassLoader";' >"$dir/plugin-security.policy" ;;
    analysis-common) extends=lang-painless ;;  # it ships a painless extension (analysis scripts)
  esac
  cat >"$dir/plugin-descriptor.properties" <<PROPS
description=$name module assembled from Maven Central by ragmesh
version=$OS_VERSION
name=$name
classname=${entry//\//.}
java.version=11
opensearch.version=$OS_VERSION
custom.foldername=
extended.plugins=$extends
has.native.controller=false
PROPS
}
# Reassembled whenever this script changes (data lives outside the server tree and survives).
stamp="$OS_HOME/.ragmesh-assembled"
fingerprint="$(sha256sum "$0" | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$fingerprint" ]; then
  ours_running && die "the installed server is out of date but running: make opensearch-down first"
  log "assembling $OS_HOME"
  work="$OS_ROOT/.assemble"
  rm -rf "$work" "$OS_HOME"
  mkdir -p "$work"
  unzip -q "$dist/opensearch-$OS_VERSION.zip" -d "$work"
  home="$work/opensearch-$OS_VERSION"
  for module in "${MODULES[@]}"; do add_module "$home" "$module"; done
  # k-NN copied in place rather than via `opensearch-plugin install`: no prompt, no network.
  mkdir -p "$home/plugins/opensearch-knn"
  unzip -q "$dist/opensearch-knn-$OS_KNN_VERSION.zip" -d "$home/plugins/opensearch-knn"
  mv "$home" "$OS_HOME"
  rm -rf "$work"
  echo "$fingerprint" >"$stamp"
fi

# ---- service user and configuration (cheap, rewritten every time so settings changes apply) -----
if [ "$(id -u)" -eq 0 ] && ! id -u "$OS_USER" >/dev/null 2>&1; then
  log "creating system user $OS_USER"
  useradd --system --no-create-home --home-dir "$OS_ROOT" --shell /usr/sbin/nologin "$OS_USER"
fi
mkdir -p "$OS_ROOT/data" "$OS_ROOT/logs" "$OS_ROOT/run" "$OS_ROOT/tmp"
cat >"$OS_HOME/config/opensearch.yml" <<YAML
cluster.name: ragmesh
node.name: ragmesh-1
network.host: 127.0.0.1
http.port: $OS_PORT
discovery.type: single-node
path.data: $OS_ROOT/data
path.logs: $OS_ROOT/logs
# A development node on a shared disk: do not go read-only or unassigned when the disk fills up.
cluster.routing.allocation.disk.threshold_enabled: false
YAML
printf -- '-Xms%s\n-Xmx%s\n' "$OS_HEAP" "$OS_HEAP" >"$OS_HOME/config/jvm.options.d/ragmesh-heap.options"
# The node writes its keystore into config/ on first start, so the service user owns the tree.
[ "$(id -u)" -eq 0 ] && chown -R "$OS_USER:" "$OS_ROOT"
log "installed $OS_HOME (java: $(find_java))"
