#!/usr/bin/env bash
# Starts the image the two ways it is used and checks the standard gRPC health service from inside the container:
# 1. `ragmesh up` (the default command): the whole mesh, the gateway on 7070; then an ingest and a cited answer;
# 2. one stage as the Helm chart runs it: read-only root filesystem, non-root, a plaintext health port.
# Containers get no network (--network none): everything is on their own loopback. Removed on exit.
set -euo pipefail
# podman settings for this kind of machine (runc, lower ulimits): deploy/image/containers.conf
export CONTAINERS_CONF=${CONTAINERS_CONF:-$(cd "$(dirname "$0")" && pwd)/containers.conf}
IMAGE=${1:-localhost/ragmesh:0.1.0}
TIMEOUT=${SMOKE_TIMEOUT:-600}
names=()
trap 'for n in "${names[@]}"; do podman rm -f "$n" >/dev/null 2>&1 || true; done' EXIT

health() {  # container address: SERVING or fail
  podman exec "$1" python -c '
import sys, grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
with grpc.insecure_channel(sys.argv[1]) as channel:
    reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=3)
name = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
print(name)
sys.exit(name != "SERVING")' "$2" 2>/dev/null
}

wait_serving() {  # container address
  local start=$SECONDS
  until health "$1" "$2"; do
    if [ "$(podman inspect --format '{{.State.Running}}' "$1")" != true ]; then
      podman logs --tail 40 "$1"; echo "smoke: $1 exited" >&2; return 1
    fi
    if (( SECONDS - start > TIMEOUT )); then
      podman logs --tail 40 "$1"; echo "smoke: $1 not SERVING after ${TIMEOUT}s" >&2; return 1
    fi
    sleep 3
  done
  echo "smoke: $1 $2 SERVING after $((SECONDS - start))s"
}

mesh=ragmesh-smoke-up-$$
names+=("$mesh")
podman run -d --name "$mesh" --network none "$IMAGE" >/dev/null
wait_serving "$mesh" 127.0.0.1:7070
# The mesh answers for real: ingest a corpus folder, ask, and find the cited document; the HTTP front door is ready.
podman exec "$mesh" ragmesh ingest examples/manuals
answer=$(podman exec "$mesh" ragmesh ask "What does error E-4412 mean?")
echo "$answer" | tail -4
grep -q "manuals/error-codes" <<<"$answer" || { echo "smoke: the answer does not cite manuals/error-codes" >&2; exit 1; }
podman exec "$mesh" python -c '
import urllib.request
print("smoke: HTTP /readyz", urllib.request.urlopen("http://127.0.0.1:8080/readyz", timeout=10).read().decode())'

stage=ragmesh-smoke-stage-$$
names+=("$stage")
podman run -d --name "$stage" --network none --read-only --tmpfs /tmp --tmpfs /var/lib/ragmesh \
  -e RAGMESH_GENERATOR_HOST=0.0.0.0 -e RAGMESH_GENERATOR_HEALTH_PORT=7175 -e RAGMESH_GENERATOR_METRICS_PORT=9475 \
  "$IMAGE" python -m services.generator.server >/dev/null
wait_serving "$stage" 127.0.0.1:7175
echo "smoke: passed"
