"""Quantiles from scraped histogram deltas, as Prometheus' histogram_quantile computes them."""

from loadtest import metrics

TEXT = """# TYPE ragmesh_stage_duration_seconds histogram
ragmesh_stage_duration_seconds_bucket{{stage="retrieve",le="0.1"}} {a}
ragmesh_stage_duration_seconds_bucket{{stage="retrieve",le="0.25"}} {b}
ragmesh_stage_duration_seconds_bucket{{stage="retrieve",le="+Inf"}} {c}
ragmesh_stage_duration_seconds_count{{stage="retrieve"}} {c}
ragmesh_stage_duration_seconds_sum{{stage="retrieve"}} 1.0
# TYPE ragmesh_degraded_answers_total counter
ragmesh_degraded_answers_total{{stage="reranker"}} {d}
"""


def snapshot(a, b, c, d):
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for family in text_string_to_metric_families(TEXT.format(a=a, b=b, c=c, d=d)):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def test_delta_quantiles_interpolate_inside_the_bucket():
    changed = metrics.delta(snapshot(10, 10, 10, 0), snapshot(60, 110, 110, 5))
    buckets = metrics.histogram_buckets(changed, metrics.STAGE_HISTOGRAM, stage="retrieve")
    assert buckets == [(0.1, 50.0), (0.25, 100.0), (float("inf"), 100.0)]
    assert metrics.quantile(buckets, 0.5) == 0.1
    assert abs(metrics.quantile(buckets, 0.95) - (0.1 + 0.15 * 0.9)) < 1e-9
    assert metrics.total(changed, metrics.DEGRADED) == 5


def test_a_counter_reset_by_a_restart_counts_from_zero():
    changed = metrics.delta(snapshot(10, 10, 10, 7), snapshot(1, 1, 1, 2))
    assert metrics.total(changed, metrics.DEGRADED) == 2


def test_no_observations_have_no_quantile():
    assert metrics.quantile([], 0.95) is None
    assert metrics.stage_summary({}, ["retrieve"]) == {}


def test_the_mesh_breakdown_is_per_ask_and_adds_up():
    """10 Asks: the gateway spent 2.0 s in them, 0.6 s calling the retriever (which served for 0.5 s) and 1.1 s
    calling the reranker (1.0 s); 8 answers were generated (0.16 s called, 0.12 s served)."""

    def sums(series: dict) -> dict:
        out = {}
        for (name, labels), (total_s, count) in series.items():
            out[(f"{name}_sum", labels)] = total_s
            out[(f"{name}_count", labels)] = count
        return out

    rpc, stage = metrics.RPC_HISTOGRAM, metrics.STAGE_HISTOGRAM
    snap = sums(
        {
            (rpc, (("method", "Ask"), ("service", "ragmesh.v1.Gateway"))): (2.0, 10),
            (rpc, (("method", "Retrieve"), ("service", "ragmesh.v1.Retriever"))): (0.5, 10),
            (rpc, (("method", "Rerank"), ("service", "ragmesh.v1.Reranker"))): (1.0, 10),
            (rpc, (("method", "Generate"), ("service", "ragmesh.v1.Generator"))): (0.12, 8),
            (stage, (("stage", "retrieve"),)): (0.6, 10),
            (stage, (("stage", "rerank"),)): (1.1, 10),
            (stage, (("stage", "generate"),)): (0.16, 8),
        }
    )
    parts = metrics.mesh_breakdown(snap, ("retrieve", "rerank", "generate"))
    assert parts["asks"] == 10
    assert parts["stages"]["retrieve"] == {"server": 0.05, "gateway_call": 0.06}
    assert parts["stages"]["generate"]["gateway_call"] == 0.016  # per Ask, not per generation
    assert abs(parts["gateway_own"] - (0.2 - 0.06 - 0.11 - 0.016)) < 1e-12
