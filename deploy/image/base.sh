#!/usr/bin/env bash
# The image's base, made from Debian packages since no image registry is reachable: mmdebstrap builds a minimal
# bookworm root (Python 3.11, CA certificates, libgomp for faiss and LightGBM) and podman imports it.
# Installs podman, runc and mmdebstrap from Debian when missing. Idempotent: a no-op once the image exists.
set -euo pipefail
# podman settings for this kind of machine (runc, lower ulimits): deploy/image/containers.conf
export CONTAINERS_CONF=${CONTAINERS_CONF:-$(cd "$(dirname "$0")" && pwd)/containers.conf}
BASE=${1:-localhost/ragmesh-base:bookworm}
if ! command -v podman >/dev/null || ! command -v mmdebstrap >/dev/null || ! command -v runc >/dev/null; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q podman buildah runc mmdebstrap uidmap >/dev/null
fi
if podman image exists "$BASE"; then
  echo "image-base: $BASE exists"
  exit 0
fi
mmdebstrap --variant=minbase --include=python3.11,python3.11-venv,ca-certificates,libgomp1 \
  --aptopt='APT::Install-Recommends "false"' bookworm - |
  podman import --change 'CMD ["/bin/bash"]' - "$BASE"
podman image inspect --format "image-base: {{.Id}} {{.Size}} bytes" "$BASE"
