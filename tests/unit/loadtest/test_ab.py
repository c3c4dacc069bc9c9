"""The A/B comparison of two builds' load-test reports: which figures it reads, and how it judges them."""

from loadtest import ab


def _report(rps: float, p50: float, ratio: float, retrieve_server: float, retrieve_call: float) -> dict:
    return {
        "steps": {"Ask": [{"concurrency": 1, "throughput": rps, "p50": p50, "p95": p50 * 1.5}]},
        "in_process": {
            "mesh": {"p50": p50, "p95": p50 * 1.5},
            "in_process": {"total": {"p50": p50 / ratio, "p95": p50 * 1.5 / ratio}},
            "ratio": {"p50": ratio, "p95": ratio},
            "breakdown_mean_s": {
                "stages": {"retrieve": {"server": retrieve_server, "gateway_call": retrieve_call}},
                "gateway_own": 0.002,
            },
        },
    }


def test_figures_are_in_milliseconds_with_the_hop_as_call_minus_server():
    got = ab.figures(_report(16.0, 0.060, 1.8, 0.040, 0.044))
    assert got["Ask c=1 req/s"] == 16.0
    assert round(got["Ask c=1 p50 ms"], 6) == 60.0
    assert round(got["mesh / in-process p50"], 6) == 1.8
    assert round(got["in-process p50 ms"], 3) == round(60.0 / 1.8, 3)
    assert round(got["retrieve server ms"], 6) == 40.0 and round(got["retrieve hop ms"], 6) == 4.0
    assert round(got["gateway own ms"], 6) == 2.0


def test_medians_are_compared_and_separated_ranges_flagged():
    base = [ab.figures(_report(16.0, p50, 1.9, 0.04, 0.045)) for p50 in (0.060, 0.070, 0.064)]
    new = [ab.figures(_report(17.0, p50, 1.7, 0.04, 0.043)) for p50 in (0.058, 0.066, 0.061)]
    rows = {r["figure"]: r for r in ab.compare(base, new)}
    p50 = rows["Ask c=1 p50 ms"]
    assert round(p50["base_median"], 6) == 64.0 and round(p50["new_median"], 6) == 61.0
    assert round(p50["difference"], 6) == -3.0 and not p50["apart"]  # the runs interleave
    assert rows["mesh / in-process p50"]["apart"] and rows["Ask c=1 req/s"]["apart"]
    assert round(rows["retrieve hop ms"]["difference"], 6) == -2.0


def test_a_figure_some_run_lacks_is_left_out():
    base = [ab.figures(_report(16.0, 0.06, 1.8, 0.04, 0.044))]
    new = [{"Ask c=1 req/s": 17.0}]
    assert [r["figure"] for r in ab.compare(base, new)] == ["Ask c=1 req/s"]
    assert ab.compare([], new) == []


def test_rounds_alternate_which_side_goes_first():
    assert ab.order(3) == [(1, "base"), (1, "new"), (2, "new"), (2, "base"), (3, "base"), (3, "new")]


def test_the_chance_of_sides_apart_follows_the_number_of_runs():
    # Two runs a side: 6 orderings of the pooled four, 2 of them apart; three a side: 20, 2 apart.
    assert [ab.chance_apart(n) for n in (1, 2, 3, 4)] == [1, 3, 10, 35]
    text = ab.markdown([], "HEAD", 2, "mesh-cost")
    assert "with 2 runs a side, chance alone does that 1 time in 3" in text
