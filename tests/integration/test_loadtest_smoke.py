"""The load-test machinery end to end, briefly (loadtest/scenarios/smoke.yaml): a private mesh, a few seconds of Ask
load through ghz with every stage's metrics scraped before and after, one fault (kill -9 the reranker under load,
then restart it), and the report. No speed is asserted here: the figures come from make loadtest and
make loadtest-faults; what is asserted is what the machinery and the mesh must do at any speed."""

import json

import pytest

from loadtest import ghz, run

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    if not ghz.installed():
        pytest.fail(f"ghz is not installed in {ghz.GHZ}: run `make tools` (make test does)")
    out = tmp_path_factory.mktemp("loadtest")
    code = run.main(["smoke", "--out", str(out)])
    return code, json.loads((out / "smoke" / "report.json").read_text()), out / "smoke"


def test_ask_load_is_measured_end_to_end_and_per_stage(smoke):
    _, report, _ = smoke
    (step,) = report["steps"]["Ask"]
    assert step["requests"] > 0
    assert step["statuses"] == {"OK": step["requests"]}, step["statuses"]
    assert len(step["latencies"]) == step["requests"]
    assert step["p50"] <= step["p95"] <= step["p99"]
    # The gateway timed each funnel stage of these Asks (its Prometheus histogram, scraped before and after).
    assert step["stages"]["retrieve"]["count"] >= step["requests"]
    assert step["stages"]["rerank"]["count"] >= 1


def test_a_dead_reranker_costs_no_failed_ask(smoke):
    _, report, _ = smoke
    (fault,) = report["faults"]
    assert fault["fault"] == "reranker"
    assert fault["requests"] > 0
    assert fault["failed"] == {}, fault["first_error"]
    assert fault["degraded"] > 0
    assert fault["hung"] == 0 and fault["max_latency_s"] < report["setup"]["deadline_s"]
    assert fault["chunks_lost"] == 0 and fault["chunks_extra"] == 0
    assert fault["met"], fault["problems"]


def test_the_report_names_what_broke_and_the_exit_status_follows_it(smoke):
    code, report, folder = smoke
    assert code == (1 if report["violations"] else 0)
    text = (folder / "report.md").read_text()
    for line in report["violations"]:
        assert line in text
    assert "kill -9 reranker, restart" in text
    for plot in ("cdf_end_to_end.png", "cdf_stages.png"):
        assert (folder / plot).stat().st_size > 0
