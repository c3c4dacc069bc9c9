"""The load-test report's per-stage table shows the wait for a gateway in-flight slot when the gateway has a limit."""

from loadtest import budgets
from loadtest.report import markdown

SETUP = {
    "cpus": 2,
    "load_average": "1.0 1.0 1.0",
    "backend": "embedded",
    "reranker": "maxsim",
    "generator": "extractive",
    "documents": 3,
    "chunks": 9,
    "ingest_s": 1.0,
    "questions": 5,
    "deadline_s": 10,
}


def _report(admission_wait):
    figures = {"p50": 0.040, "p95": 0.090, "p99": 0.100, "count": 100}
    step = {
        "concurrency": 16,
        "requests": 100,
        "throughput": 50.0,
        "p50": 0.25,
        "p95": 0.35,
        "p99": 0.4,
        "statuses": {"OK": 100},
        "enforced": True,
        "within_budget": True,
        "stages": {"retrieve": figures},
        "admission_wait": admission_wait,
    }
    return {
        "scenario": "t",
        "started": "now",
        "seconds": 1.0,
        "setup": SETUP,
        "violations": [],
        "steps": {"Ask": [step]},
    }


def test_the_slot_wait_is_the_first_column_when_the_gateway_has_a_limit():
    wait = {"p50": 0.150, "p95": 0.200, "p99": 0.240, "count": 100}
    text = markdown(_report(wait), budgets.load(), [])
    assert "| concurrency | waiting for a slot | retrieve (budget 250) |" in text
    assert "| 16 | 200 (150/240) | 90.0 (40.0/100) |" in text


def test_without_a_limit_the_table_has_the_stages_alone():
    text = markdown(_report(None), budgets.load(), [])
    assert "waiting for a slot" not in text
    assert "| 16 | 90.0 (40.0/100) |" in text


def test_the_mesh_line_says_where_tritons_model_runs():
    report = _report(None)
    assert "triton reranker" not in markdown(report, budgets.load(), [])
    report["setup"] = {**SETUP, "reranker": "triton", "reranker_runtime": "torch fp16 on cuda"}
    assert "- Mesh: embedded index, triton reranker (on torch fp16 on cuda), extractive generator;" in markdown(
        report, budgets.load(), []
    )
