"""The gateway's per-key rate limit, for real: a mesh whose keys may make 2 calls a second with a burst of 3 (the
default is 50 and 100). Past the burst a call is refused with RESOURCE_EXHAUSTED naming the key and the wait, the
refusal is counted, another tenant's key is not held back, and after the wait the key is served again."""

import time

import grpc
import pytest

from loadtest import metrics
from services.cli.mesh import Mesh
from shared.stubs import gateway_pb2, gateway_pb2_grpc
from tests.support.mesh import TENANT

pytestmark = pytest.mark.integration

RATE, BURST = 2, 3


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    mesh = Mesh.on_free_ports(
        str(tmp_path_factory.mktemp("mesh-limited")),
        extra_env={"RAGMESH_GATEWAY_RATE_LIMIT_PER_SECOND": str(RATE), "RAGMESH_GATEWAY_RATE_LIMIT_BURST": str(BURST)},
    )
    mesh.start(timeout=240)
    with mesh.gateway_channel() as channel:
        yield mesh, gateway_pb2_grpc.GatewayStub(channel)
    mesh.stop()


def list_documents(gateway, tenant: str = TENANT):
    return gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant), timeout=10)


def refusals(mesh) -> float:
    snapshot = metrics.scrape([mesh.metrics_url("gateway")], timeout=10)
    return metrics.total(snapshot, "ragmesh_auth_failures_total", reason="rate_limited")


def test_a_key_past_its_burst_is_refused_with_the_wait_and_served_again_after_it(limited):
    mesh, gateway = limited
    before = refusals(mesh)
    for _ in range(BURST):
        list_documents(gateway)
    with pytest.raises(grpc.RpcError) as err:
        list_documents(gateway)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    details = err.value.details()
    assert f"rate limit of {RATE} requests/s (burst {BURST})" in details and "retry in" in details
    wait = float(details.rsplit("retry in ", 1)[1].rstrip("s"))
    assert 0 < wait <= 1 / RATE + 0.05
    assert refusals(mesh) == before + 1
    # Another tenant's key has a bucket of its own.
    list_documents(gateway, tenant="other-tenant")
    time.sleep(wait + 0.05)
    list_documents(gateway)
