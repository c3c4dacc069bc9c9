"""A real mesh: six service processes on free loopback ports, stopped by pid at the end."""

import grpc
import pytest

from services.cli.mesh import Mesh, free_port
from shared.stubs import gateway_pb2_grpc
from tests.integration.otlp_receiver import OtlpReceiver
from tests.support.mesh import EXAMPLES, TENANT, ingest_paths, start_front_door, wait_http


@pytest.fixture(scope="session")
def otlp():
    receiver = OtlpReceiver()
    receiver.endpoint = receiver.start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="session")
def mesh(tmp_path_factory, otlp):
    m = Mesh.on_free_ports(
        str(tmp_path_factory.mktemp("mesh")),
        # The suite's tests share the demo tenant's key, and on a fast host their calls outran the default 50 per
        # second (two feedback tests were refused, RESOURCE_EXHAUSTED). They are not about the limit, which
        # test_rate_limit.py checks on a mesh of its own.
        extra_env={"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "RAGMESH_GATEWAY_RATE_LIMIT_PER_SECOND": "10000"},
    )
    m.start(timeout=240)
    yield m
    m.stop()


@pytest.fixture(scope="session")
def gateway(mesh):
    """Authenticated as each request's tenant with that tenant's local writer key (made on first use)."""
    channel = mesh.gateway_channel()
    yield gateway_pb2_grpc.GatewayStub(channel)
    channel.close()


@pytest.fixture(scope="session")
def raw(mesh):
    """A gateway stub that sends only the metadata each test gives it (no key unless the test adds one)."""
    with grpc.insecure_channel(mesh.address("gateway")) as channel:
        yield gateway_pb2_grpc.GatewayStub(channel)


@pytest.fixture(scope="session")
def ingested(gateway):
    results = ingest_paths(gateway, TENANT, [EXAMPLES])
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return results


@pytest.fixture(scope="session")
def front_door(mesh):
    """The HTTP front door as its own process on a free port, calling the session mesh's gateway; its URL."""
    port = free_port()
    log_path = mesh.log_dir / "http.log"
    proc = start_front_door(mesh.env(), port, log_path)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url, proc, log_path)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
