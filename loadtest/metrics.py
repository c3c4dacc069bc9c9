"""Scrapes the stages' Prometheus endpoints before and after a load step and reads what changed in between:
per-stage latency quantiles from histogram buckets (interpolated as Prometheus' histogram_quantile does, so a
figure here is the figure an alert sees), and counters such as degraded answers and errors by status."""

import math
import urllib.request
from collections.abc import Iterable

from prometheus_client.parser import text_string_to_metric_families

# (sample name, sorted label pairs) -> value
Snapshot = dict[tuple[str, tuple[tuple[str, str], ...]], float]

STAGE_HISTOGRAM = "ragmesh_stage_duration_seconds"
RPC_HISTOGRAM = "ragmesh_rpc_duration_seconds"
ADMISSION_HISTOGRAM = "ragmesh_gateway_admission_wait_seconds"
DEGRADED = "ragmesh_degraded_answers_total"
RPC_ERRORS = "ragmesh_rpc_errors_total"
# prometheus_client's process collector: every stage exposes its process's user + system CPU seconds.
PROCESS_CPU = "process_cpu_seconds_total"
# Beside the stages in a CPU reading: ghz, the load generator, this process's children.
LOAD_GENERATOR = "ghz"


def scrape(urls: Iterable[str], timeout: float = 5.0) -> Snapshot:
    """Every sample of every endpoint; an endpoint that does not answer (a stage being restarted) adds nothing."""
    snapshot: Snapshot = {}
    for url in urls:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as reply:
                text = reply.read().decode()
        except OSError:
            continue
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                key = (sample.name, tuple(sorted(sample.labels.items())))
                snapshot[key] = snapshot.get(key, 0.0) + sample.value
    return snapshot


def scrape_by_stage(urls_by_stage: dict[str, list[str]], timeout: float = 5.0) -> dict[str, Snapshot]:
    """Per stage, the summed samples of its processes' endpoints (each endpoint read once)."""
    return {stage: scrape(urls, timeout) for stage, urls in urls_by_stage.items()}


def merged(snapshots: Iterable[Snapshot]) -> Snapshot:
    """Several snapshots summed per sample: the whole mesh from its stages'."""
    out: Snapshot = {}
    for snapshot in snapshots:
        for key, value in snapshot.items():
            out[key] = out.get(key, 0.0) + value
    return out


def cpu_seconds(by_stage: dict[str, Snapshot]) -> dict[str, float]:
    """Each stage's CPU seconds so far (its processes' user + system time, replicas summed). A stage none of
    whose endpoints answered is left out rather than read as zero."""
    return {stage: total(snapshot, PROCESS_CPU) for stage, snapshot in by_stage.items() if snapshot}


def stage_cpu(per_process: dict[str, float]) -> dict[str, float]:
    """The mesh's own processes of a CPU reading, without the load generator that shares the machine."""
    return {name: value for name, value in per_process.items() if name != LOAD_GENERATOR}


def cpu_per_request(before: dict[str, float], after: dict[str, float], requests: int) -> dict[str, float]:
    """CPU seconds each stage spent per request between two cpu_seconds readings (a stage read only once, or
    restarted in between, is left out: its difference would not be what the requests cost)."""
    if requests <= 0:
        return {}
    return {
        stage: (after[stage] - before[stage]) / requests
        for stage in after
        if stage in before and after[stage] >= before[stage]
    }


def cpu_use(before: dict[str, float], after: dict[str, float], requests: int, seconds: float, cpus: int) -> dict:
    """Per process kind, CPU seconds per request, and the share of the machine's CPUs they kept busy together."""
    per_request = cpu_per_request(before, after, requests)
    spent = sum(after[name] - before[name] for name in per_request)
    return {"per_request_s": per_request, "busy": spent / (seconds * cpus) if seconds > 0 and cpus > 0 else None}


def delta(before: Snapshot, after: Snapshot) -> Snapshot:
    """after - before per sample; a counter that went down was reset by a restart and counts from zero."""
    out: Snapshot = {}
    for key, value in after.items():
        previous = before.get(key, 0.0)
        out[key] = value - previous if value >= previous else value
    return out


def histogram_buckets(snapshot: Snapshot, name: str, **match: str) -> list[tuple[float, float]]:
    """(upper bound, cumulative count) of one histogram's buckets, summed over series whose labels match."""
    sums: dict[float, float] = {}
    for (sample, labels), value in snapshot.items():
        if sample != f"{name}_bucket":
            continue
        label_map = dict(labels)
        if any(label_map.get(k) != v for k, v in match.items()):
            continue
        bound = float(label_map["le"])
        sums[bound] = sums.get(bound, 0.0) + value
    return sorted(sums.items())


def quantile(buckets: list[tuple[float, float]], q: float) -> float | None:
    """Prometheus' histogram_quantile: linear interpolation inside the bucket the rank falls in."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    rank = q * total
    lower_bound, lower_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if math.isinf(bound):
                return lower_bound  # past the last finite bucket: its bound is all that is known
            if count == lower_count:
                return bound
            return lower_bound + (bound - lower_bound) * (rank - lower_count) / (count - lower_count)
        lower_bound, lower_count = bound, count
    return buckets[-1][0]


def cdf(buckets: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """The bucketed CDF (finite bounds, share of observations at or below each)."""
    if not buckets or buckets[-1][1] <= 0:
        return [], []
    total = buckets[-1][1]
    finite = [(b, c) for b, c in buckets if not math.isinf(b)]
    return [b for b, _ in finite], [c / total for _, c in finite]


def total(snapshot: Snapshot, name: str, **match: str) -> float:
    """Sum of a counter's series whose labels match."""
    return sum(
        value
        for (sample, labels), value in snapshot.items()
        if sample == name and all(dict(labels).get(k) == v for k, v in match.items())
    )


def by_label(snapshot: Snapshot, name: str, label: str, **match: str) -> dict[str, float]:
    """A counter's values grouped by one label (e.g. errors by code), zero groups left out."""
    out: dict[str, float] = {}
    for (sample, labels), value in snapshot.items():
        label_map = dict(labels)
        if sample == name and all(label_map.get(k) == v for k, v in match.items()) and value:
            out[label_map.get(label, "")] = out.get(label_map.get(label, ""), 0.0) + value
    return dict(sorted(out.items()))


def histogram_summary(snapshot: Snapshot, name: str, **match: str) -> dict[str, float | None] | None:
    """p50/p95/p99 and count of one histogram's matching series over the snapshot (a delta); None when empty."""
    buckets = histogram_buckets(snapshot, name, **match)
    if not buckets or buckets[-1][1] <= 0:
        return None
    out: dict[str, float | None] = {f"p{q}": quantile(buckets, q / 100) for q in (50, 95, 99)}
    out["count"] = buckets[-1][1]
    return out


def stage_summary(snapshot: Snapshot, stages: Iterable[str]) -> dict[str, dict[str, float | None]]:
    """p50/p95/p99 and count of each funnel stage as the gateway timed it, over the snapshot (a delta)."""
    summaries = {stage: histogram_summary(snapshot, STAGE_HISTOGRAM, stage=stage) for stage in stages}
    return {stage: summary for stage, summary in summaries.items() if summary is not None}


# The stage servers' own service names (their server-side ragmesh_rpc_duration_seconds) per funnel stage.
STAGE_RPCS = {
    "retrieve": ("ragmesh.v1.Retriever", "Retrieve"),
    "rerank": ("ragmesh.v1.Reranker", "Rerank"),
    "generate": ("ragmesh.v1.Generator", "Generate"),
}
GATEWAY_ASK = ("ragmesh.v1.Gateway", "Ask")


def per_call(snapshot: Snapshot, name: str, calls: float, **match: str) -> float | None:
    """A histogram's summed seconds over the snapshot divided by `calls` (exact: its _sum, no buckets)."""
    return total(snapshot, f"{name}_sum", **match) / calls if calls else None


def mesh_breakdown(snapshot: Snapshot, stages: Iterable[str]) -> dict:
    """Where an Ask's time goes in the mesh, in seconds per Ask (sums over the snapshot / Asks, so the parts add
    up): per stage, the stage server's own time and the gateway's call of it (the difference is the hop:
    serialization, transport, the stage's interceptors, thread hand-off); the gateway's own work (its Ask
    server-side minus its stage calls: auth, the answer log, tracing, building the response)."""
    service, method = GATEWAY_ASK
    asks = total(snapshot, f"{RPC_HISTOGRAM}_count", service=service, method=method)
    out: dict = {"asks": asks, "stages": {}}
    for stage in stages:
        stage_service, stage_method = STAGE_RPCS[stage]
        out["stages"][stage] = {
            "server": per_call(snapshot, RPC_HISTOGRAM, asks, service=stage_service, method=stage_method),
            "gateway_call": per_call(snapshot, STAGE_HISTOGRAM, asks, stage=stage),
        }
    out["gateway_ask"] = per_call(snapshot, RPC_HISTOGRAM, asks, service=service, method=method)
    calls = [s["gateway_call"] for s in out["stages"].values()]
    out["gateway_own"] = (
        out["gateway_ask"] - sum(calls) if out["gateway_ask"] is not None and None not in calls else None
    )
    return out


def hop(stage_times: dict) -> float | None:
    """One stage's hop in a mesh_breakdown: the gateway's call of it minus the stage server's own time."""
    call, server = stage_times.get("gateway_call"), stage_times.get("server")
    return None if call is None or server is None else call - server
