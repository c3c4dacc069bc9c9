"""The gateway's in-flight limit on a real mesh: a gateway allowing one funnel at a time still answers every one
of several concurrent Asks, with or without a deadline, one after another, and its metrics show the waiting."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from loadtest import metrics
from services.cli.mesh import free_port
from shared.stubs import gateway_pb2
from tests.support.mesh import TENANT, extra_stages

pytestmark = pytest.mark.integration

QUESTIONS = ["how much is the Team plan per month", "whats E-4412", "who approves refunds above 5000", "sso setup"]


def _admission_wait(metrics_port: int) -> tuple[float, float]:
    """(count, sum) of the gateway's Ask waits for a slot."""
    snapshot = metrics.scrape([f"http://127.0.0.1:{metrics_port}/metrics"], timeout=10)
    name = metrics.ADMISSION_HISTOGRAM
    return metrics.total(snapshot, f"{name}_count", rpc="Ask"), metrics.total(snapshot, f"{name}_sum", rpc="Ask")


def test_a_gateway_with_one_slot_answers_concurrent_asks_one_after_another(mesh, ingested, tmp_path):
    port, metrics_port = free_port(), free_port()
    env = mesh.env()
    env.update(
        {
            "RAGMESH_GATEWAY_PORT": str(port),
            "RAGMESH_GATEWAY_METRICS_PORT": str(metrics_port),
            "RAGMESH_GATEWAY_MAX_IN_FLIGHT": "1",
            "RAGMESH_DATA_DIR": str(tmp_path),
        }
    )
    with extra_stages(["gateway"], env, port) as gateway:

        def ask(numbered):
            number, question = numbered
            request = gateway_pb2.AskRequest(tenant_id=TENANT, question=question)
            # Half the calls carry no deadline: gRPC then reports ~9.2e18 s remaining, which a wait must survive.
            return gateway.Ask(request, timeout=60) if number % 2 else gateway.Ask(request)

        with ThreadPoolExecutor(len(QUESTIONS)) as pool:
            calls = [pool.submit(ask, numbered) for numbered in enumerate(QUESTIONS)]
            answers = [call.result(timeout=120) for call in calls]
        count, waited = _admission_wait(metrics_port)
    assert all(a.answer.text or a.answer.abstained for a in answers)
    assert count == len(QUESTIONS)
    # Four at once through one slot: the later ones waited for the earlier ones' whole funnel.
    assert waited > 0.01, waited
