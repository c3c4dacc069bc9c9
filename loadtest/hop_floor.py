"""The least a hop of the mesh costs on this host: an empty call (the gRPC health check) to each server an Ask
crosses, one at a time, through that stage's own server (its interceptors and thread pool) and the mesh's
transport (mTLS where the mesh uses it). An Ask crosses four hops (client -> gateway, gateway -> retriever,
reranker, generator), so even with empty messages and no work in the services the mesh cannot beat the
in-process pipeline by less than these four round trips: that bounds the mesh/in-process ratio from below."""

import time

import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.cli.mesh import Mesh
from shared.tls import TLS_ENV, stage_channel

# The servers an Ask crosses, in the order it crosses them.
ASK_HOPS = ("gateway", "retriever", "reranker", "generator")


def empty_calls(address: str, stage: str, tls_folder: str, calls: int, warm_up: int = 20) -> list[float]:
    """Seconds per health check, `calls` of them in a row on one channel (after `warm_up` untimed ones: the
    first pay for the connection)."""
    with stage_channel(address, stage, "launcher", folder=tls_folder) as channel:
        check = health_pb2_grpc.HealthStub(channel).Check
        request = health_pb2.HealthCheckRequest()
        for _ in range(warm_up):
            check(request, timeout=5.0)
        seconds = []
        for _ in range(calls):
            started = time.perf_counter()
            check(request, timeout=5.0)
            seconds.append(time.perf_counter() - started)
    return seconds


def measure(mesh: Mesh, calls: int = 200, stages: tuple[str, ...] = ASK_HOPS) -> dict[str, dict[str, float]]:
    """Per stage, the empty call's p50 and p95 in seconds."""
    tls_folder = mesh.env().get(TLS_ENV, "")
    out = {}
    for stage in stages:
        seconds = empty_calls(mesh.address(stage), stage, tls_folder, calls)
        out[stage] = {f"p{q}": float(np.percentile(seconds, q)) for q in (50, 95)}
    return out


def least_ratio(in_process_p50: float, floor: dict[str, dict[str, float]]) -> float:
    """The lowest mesh/in-process ratio at p50 these round trips allow: the in-process time plus one empty
    call per hop, over the in-process time."""
    if in_process_p50 <= 0:
        raise ValueError(f"in-process p50 must be positive (got {in_process_p50})")
    return (in_process_p50 + sum(f["p50"] for f in floor.values())) / in_process_p50
