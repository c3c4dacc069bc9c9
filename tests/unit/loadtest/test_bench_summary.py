"""make bench's summary: one run's figures against issue #19's goals, nothing filled in from older runs."""

import json

from loadtest import bench_summary
from loadtest.figures import figure

RUN = "2026-12-01T10:00:00Z"
BEFORE = "2026-12-01T09:00:00Z"


def _entry(name, value, unit, measured_at=RUN, **config):
    return {**figure(name, value, unit, cpus=2, load_average=1.0, **config), "measured_at": measured_at}


def _rows(figures, tmp_path):
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(figures))
    sections = bench_summary.summary(bench_summary.load(RUN, path))
    return {row.what: row for _, rows in sections for row in rows}


def test_a_goal_is_judged_on_this_runs_figure_and_an_older_one_is_not_used(tmp_path):
    hybrid = {"backend": "embedded", "query": "hybrid", "k": 50}
    rows = _rows(
        [
            _entry("retrieval.p95", 40.0, "ms", chunks=100_000, **hybrid),
            _entry("retrieval.p50", 12.0, "ms", chunks=100_000, **hybrid),
            _entry("retrieval.p95", 180.0, "ms", chunks=1_000_000, **hybrid),
            _entry("retrieval.p95", 20.0, "ms", BEFORE, chunks=10_000, **hybrid),  # an older run's
            _entry("retrieval.knn_recall_at_50", 0.97, "ratio", chunks=1_000_000, backend="embedded", query="knn"),
        ],
        tmp_path,
    )
    assert rows["retrieve p50 / p95, embedded, 100,000 chunks"].verdict == "met"
    assert rows["retrieve p50 / p95, embedded, 100,000 chunks"].value.startswith("12.0 ms / 40.0 ms")
    assert rows["retrieve p50 / p95, embedded, 1,000,000 chunks"].verdict == "MISSED"  # 180 > 150
    assert rows["k-NN recall@50, embedded, 1,000,000 chunks"].verdict == "MISSED"  # 0.97 < 0.98
    assert rows["retrieve p50 / p95, embedded, 10,000 chunks"].value == "- / -"  # not taken from the older run
    assert rows["retrieve p50 / p95, opensearch, 100,000 chunks"].verdict == "not measured"
    assert rows["Ask end to end, sample: p50 / p95"].verdict == "not measured"


def test_the_cross_encoder_variant_is_the_fastest_within_tolerance_and_budget(tmp_path):
    figures = []
    model = {"model": "ragmesh-ce/x", "model_version": "abc", "threads": 2, "optimization": "all"}
    for variant, length, candidates, idle_p95, ndcg in (
        ("fp32", 96, 50, 1300.0, 0.700),  # the full model: the reference
        ("int8", 96, 50, 900.0, 0.698),  # within tolerance but over the budget
        ("int8", 64, 50, 280.0, 0.6960),  # within tolerance and budget: chosen
        ("int8", 64, 20, 150.0, 0.690),  # faster, but 0.010 below the full model
    ):
        config = {**model, "variant": variant, "max_length": length, "candidates": candidates}
        figures += [
            _entry("rerank.tradeoff.p50", idle_p95 / 2, "ms", **config),
            _entry("rerank.tradeoff.p95", idle_p95 * 1.5, "ms", **config),
            _entry("rerank.tradeoff.idle_p95", idle_p95, "ms", **config),
            _entry("rerank.tradeoff.ndcg10_fused", ndcg + 0.05, "nDCG@10", **config),
            _entry("rerank.tradeoff.ndcg10_alone", ndcg, "nDCG@10", **config),
        ]
    rows = _rows(figures, tmp_path)
    chosen = rows["cross-encoder ragmesh-ce/x, chosen variant (int8@64 top50 t2 all)"]
    assert (chosen.value, chosen.verdict) == ("280 ms / 0.6960", "met")
    # The goal is SciFact's: a run that measured only another model says so.
    assert rows["cross-encoder ragmesh-ce/scifact, variants on SciFact's dev portion"].verdict == "not measured"
    for figure_ in figures:
        figure_["config"]["model"] = "ragmesh-ce/scifact"
    assert "cross-encoder ragmesh-ce/scifact, variants on SciFact's dev portion" not in _rows(figures, tmp_path)


def test_the_summary_counts_goals_met_missed_and_not_measured(tmp_path):
    rows = [bench_summary.Row("a", "1", "2", "met"), bench_summary.Row("b", "3", "2", "MISSED")]
    text = bench_summary.render(RUN, [("x", rows), ("y", [bench_summary.Row("c", "-", "", "not measured")])])
    assert text.endswith("goals: 1 met, 1 missed, 1 not measured in this run")
