"""A real mesh: six service processes on free loopback ports, stopped by pid at the end."""

import contextlib
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import grpc
import pytest

from services.cli.documents import collect_files, to_source_document
from services.cli.mesh import ROOT_DIR, Mesh, free_port
from shared.credentials import gateway_channel
from shared.keys import local_key
from shared.stubs import gateway_pb2, gateway_pb2_grpc
from tests.integration.otlp_receiver import OtlpReceiver

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
TENANT = "demo"


@pytest.fixture(scope="session")
def otlp():
    receiver = OtlpReceiver()
    receiver.endpoint = receiver.start()
    yield receiver
    receiver.stop()


@pytest.fixture(scope="session")
def mesh(tmp_path_factory, otlp):
    m = Mesh.on_free_ports(
        str(tmp_path_factory.mktemp("mesh")), extra_env={"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint}
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


def ingest_paths(gateway, tenant, paths, timeout=300):
    docs = [to_source_document(p, uri) for p, uri in collect_files(paths)]
    return list(gateway.Ingest(gateway_pb2.IngestRequest(tenant_id=tenant, documents=docs), timeout=timeout))


@pytest.fixture(scope="session")
def ingested(gateway):
    results = ingest_paths(gateway, TENANT, [EXAMPLES])
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return results


@contextlib.contextmanager
def extra_stages(stages: list[str], env: dict, port: int, stub=gateway_pb2_grpc.GatewayStub):
    """Extra stage processes (wired by `env` to whatever the test chooses) and a `stub` for the one
    among them listening on `port` (the gateway by default); all stopped by pid afterwards. A gateway
    among them is called with local keys from its data dir."""
    data_dir = env.get("RAGMESH_DATA_DIR", "")
    if "gateway" in stages and data_dir:
        local_key(data_dir, TENANT)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", f"services.{stage}.server"],
            env=env,
            cwd=ROOT_DIR,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for stage in stages
    ]
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    if stub is gateway_pb2_grpc.GatewayStub and data_dir:
        channel = gateway_channel(f"127.0.0.1:{port}", lambda tenant: local_key(data_dir, tenant or TENANT))
    try:
        grpc.channel_ready_future(channel).result(timeout=120)
        yield stub(channel)
    finally:
        channel.close()
        for proc in procs:
            proc.terminate()
            proc.wait(30)


def start_front_door(env: dict, port: int, log_path) -> subprocess.Popen:
    """`python -m services.http.server` on 127.0.0.1:port with `env` (which says where the gateway is)."""
    env = {**env, "RAGMESH_HTTP_HOST": "127.0.0.1", "RAGMESH_HTTP_PORT": str(port)}
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "services.http.server"],
            env=env,
            cwd=ROOT_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )


def wait_http(url: str, proc: subprocess.Popen, log_path, timeout: float = 90.0, ready: bool = True) -> None:
    """Until `url`/readyz answers 200 (ready) or at all (not ready: e.g. 503 while its gateway is down)."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, f"the front door exited:\n{open(log_path).read()[-3000:]}"
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2):
                return
        except urllib.error.HTTPError:
            if not ready:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"{url} not ready:\n{open(log_path).read()[-3000:]}"
        time.sleep(0.3)


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
