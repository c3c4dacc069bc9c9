"""The hop floor of the load-test report, measured on a real mesh: an empty call through each server an Ask crosses."""

import pytest

from loadtest import hop_floor

pytestmark = pytest.mark.integration


def test_every_server_an_ask_crosses_answers_an_empty_call_in_well_under_a_second(mesh):
    floor = hop_floor.measure(mesh, calls=30)
    assert tuple(floor) == hop_floor.ASK_HOPS
    for stage, figures in floor.items():
        assert 0 < figures["p50"] <= figures["p95"] < 1.0, (stage, figures)


def test_a_server_that_does_not_answer_fails_the_measurement():
    with pytest.raises(Exception) as caught:
        hop_floor.empty_calls("127.0.0.1:1", "retriever", "", calls=1, warm_up=0)
    assert "UNAVAILABLE" in str(caught.value)
