"""CPU per request in the load report: each stage's process CPU read from its own /metrics endpoint (a real
prometheus_client server), differences per request, and the tables that show them."""

import socket

import pytest
from prometheus_client import start_http_server

from loadtest import ab, budgets, metrics
from loadtest.report import cpu_comparison_lines, markdown
from tests.unit.loadtest.test_report_admission import _report


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def endpoint():
    """This process's default registry (with its process collector) served on loopback."""
    port = _free_port()
    server, thread = start_http_server(port, addr="127.0.0.1")
    yield f"http://127.0.0.1:{port}/metrics"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_a_stage_reads_its_processes_cpu_and_an_unanswering_one_is_left_out(endpoint):
    sum(i * i for i in range(200_000))  # some CPU of this process's own to read back
    by_stage = metrics.scrape_by_stage(
        {"retriever": [endpoint], "reranker": [f"http://127.0.0.1:{_free_port()}/metrics"]}
    )
    read = metrics.cpu_seconds(by_stage)
    assert set(read) == {"retriever"}
    assert read["retriever"] > 0
    twice = metrics.cpu_seconds(metrics.scrape_by_stage({"retriever": [endpoint, endpoint]}))  # replicas add up
    assert twice["retriever"] >= 2 * read["retriever"]


def test_the_mesh_snapshot_sums_its_stages():
    one = {("requests_total", (("stage", "retriever"),)): 3.0}
    two = {("requests_total", (("stage", "retriever"),)): 4.0, ("up", ()): 1.0}
    assert metrics.merged([one, two, {}]) == {("requests_total", (("stage", "retriever"),)): 7.0, ("up", ()): 1.0}


def test_cpu_per_request_leaves_out_a_restarted_or_unread_stage():
    before = {"retriever": 10.0, "reranker": 5.0, "generator": 3.0}
    after = {"retriever": 10.9, "reranker": 0.2, "gateway": 4.0, "generator": 3.1}
    per_request = metrics.cpu_per_request(before, after, 100)
    assert per_request == pytest.approx({"retriever": 0.009, "generator": 0.001})
    assert metrics.cpu_per_request(before, after, 0) == {}


def test_busy_is_the_share_of_the_machines_cpus():
    used = metrics.cpu_use({"retriever": 0.0, "ghz": 1.0}, {"retriever": 6.0, "ghz": 2.0}, 700, 4.0, 2)
    assert used["per_request_s"] == pytest.approx({"retriever": 6.0 / 700, "ghz": 1.0 / 700})
    assert used["busy"] == pytest.approx(7.0 / 8.0)
    assert metrics.cpu_use({}, {}, 10, 0.0, 2)["busy"] is None


def test_the_step_table_shows_cpu_per_request_by_process():
    report = _report(None)
    step = report["steps"]["Ask"][0]
    assert "CPU per Ask by process" not in markdown(report, budgets.load(), [])  # an older report lacks it
    step["cpu"] = {"per_request_s": {"retriever": 0.0088, "gateway": 0.0043, "ghz": 0.0005}, "busy": 0.55}
    text = markdown(report, budgets.load(), [])
    assert "| concurrency | retriever | gateway | ghz | all | CPUs busy |" in text
    assert "| 16 | 8.8 | 4.3 | 0.5 | 13.6 | 55% |" in text


def test_the_comparison_says_how_much_more_cpu_the_mesh_spends():
    comparison = {
        "cpu_per_ask_s": {"mesh": {"retriever": 0.009, "gateway": 0.004, "ghz": 0.0005}, "in_process": 0.0065}
    }
    (_, line) = cpu_comparison_lines(comparison)
    assert "the mesh's processes 13.0 ms (retriever 9.0, gateway 4.0; ghz 0.5)" in line
    assert "the in-process pipeline 6.5 ms: 2.00 times the CPU" in line
    assert cpu_comparison_lines({}) == []


def test_ab_compares_the_cpu_per_ask_of_both_pipelines():
    report = {
        "in_process": {
            "mesh": {"p50": 0.02, "p95": 0.03},
            "in_process": {"total": {"p50": 0.01, "p95": 0.015}},
            "ratio": {"p50": 2.0, "p95": 2.0},
            "cpu_per_ask_s": {"mesh": {"retriever": 0.009, "gateway": 0.004, "ghz": 0.0005}, "in_process": 0.0065},
        }
    }
    got = ab.figures(report)
    assert got["mesh CPU ms per Ask"] == pytest.approx(13.0)
    assert got["in-process CPU ms per Ask"] == pytest.approx(6.5)
