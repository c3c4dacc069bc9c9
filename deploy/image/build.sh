#!/usr/bin/env bash
# Builds the Containerfile offline: the wheels for the image's Python 3.11 are downloaded here (pip, PyPI; kept
# in ~/.cache/ragmesh/image-wheels, so later builds download only what changed) and the embedders come from
# `make models`; both are mounted read-only into the build.
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:-localhost/ragmesh-base:bookworm}
IMAGE=${2:-localhost/ragmesh:0.1.0}
WHEELS=${RAGMESH_IMAGE_WHEELS:-$HOME/.cache/ragmesh/image-wheels}
MODELS=${RAGMESH_MODEL_CACHE:-$HOME/.cache/ragmesh/models}
mkdir -p "$WHEELS"
.venv/bin/pip download --quiet --only-binary=:all: --find-links "$WHEELS" -d "$WHEELS" ./clients/python . setuptools pip
podman build --file Containerfile --build-arg BASE="$BASE" \
  --volume "$WHEELS:/wheels:ro" --volume "$MODELS:/models:ro" --tag "$IMAGE" .
podman image inspect --format "image: $IMAGE {{.Id}} {{.Size}} bytes" "$IMAGE"
