#!/usr/bin/env bash
# Builds the Containerfile offline: the wheels for the image's Python 3.11 are downloaded here (pip, PyPI; kept
# in ~/.cache/ragmesh/image-wheels, so later builds download only what changed) and the embedders come from
# `make models`; both are mounted read-only into the build. The build context is the working tree, or the folder
# given as the third argument (e.g. a `git archive` of a commit plus the generated stubs).
set -euo pipefail
# podman settings for this kind of machine (runc, lower ulimits): deploy/image/containers.conf
export CONTAINERS_CONF=${CONTAINERS_CONF:-$(cd "$(dirname "$0")" && pwd)/containers.conf}
cd "$(dirname "$0")/../.."
BASE=${1:-localhost/ragmesh-base:bookworm}
IMAGE=${2:-localhost/ragmesh:0.1.0}
WHEELS=${RAGMESH_IMAGE_WHEELS:-$HOME/.cache/ragmesh/image-wheels}
MODELS=${RAGMESH_MODEL_CACHE:-$HOME/.cache/ragmesh/models}
CONTEXT=${3:-.}
mkdir -p "$WHEELS"
# pip resolves every requirement against the index again even when the wheels are here (minutes on two busy
# cores), so the download is skipped while the dependency lists are the ones it was made for.
stamp="$WHEELS/.downloaded-$(cat pyproject.toml clients/python/pyproject.toml | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  .venv/bin/pip download --quiet --only-binary=:all: --find-links "$WHEELS" -d "$WHEELS" ./clients/python . setuptools pip
  rm -f "$WHEELS"/.downloaded-*
  touch "$stamp"
fi
podman build --file "$CONTEXT/Containerfile" --build-arg BASE="$BASE" \
  --volume "$WHEELS:/wheels:ro" --volume "$MODELS:/models:ro" --tag "$IMAGE" "$CONTEXT"
podman image inspect --format "image: $IMAGE {{.Id}} {{.Size}} bytes" "$IMAGE"
