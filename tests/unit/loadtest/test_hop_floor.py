import pytest

from loadtest.hop_floor import least_ratio
from loadtest.report import floor_lines

FLOOR = {stage: {"p50": 0.0005, "p95": 0.0008} for stage in ("gateway", "retriever", "reranker", "generator")}


def test_least_ratio_adds_one_empty_call_per_hop_to_the_in_process_time():
    assert least_ratio(0.010, FLOOR) == pytest.approx((0.010 + 4 * 0.0005) / 0.010)


def test_least_ratio_refuses_an_in_process_time_that_is_not_positive():
    with pytest.raises(ValueError, match="in-process p50"):
        least_ratio(0.0, FLOOR)


def test_the_report_names_each_hop_and_says_which_side_of_the_goal_the_floor_is():
    comparison = {"hop_floor_s": FLOOR, "least_ratio_p50": 1.2}
    text = "\n".join(floor_lines(comparison, goal=1.10))
    assert "gateway 0.50 (0.80)" in text and "generator 0.50 (0.80)" in text
    assert "at best be 1.20" in text and "above the 1.10 goal" in text
    assert "below the 1.30 goal" in "\n".join(floor_lines(comparison, goal=1.30))


def test_a_report_without_the_floor_renders_without_it():
    assert floor_lines({"ratio": {"p50": 2.0}}) == []
