"""The plaintext health port (RAGMESH_<STAGE>_HEALTH_PORT) that Kubernetes' gRPC probes use: a real stage with
mutual TLS on serves the standard health service there in plaintext, and nothing else; its own port stays TLS-only."""

import os
import signal
import subprocess
import sys
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from services.cli.mesh import ROOT_DIR, free_port
from shared.tls import TLS_ENV, make_certs

pytestmark = pytest.mark.integration


def check(address: str) -> int:
    with grpc.insecure_channel(address) as channel:
        return health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2).status


@pytest.fixture(scope="module")
def generator(tmp_path_factory):
    """The generator stage (quick to start) with mutual TLS and a health port, stopped by pid."""
    certs = make_certs(tmp_path_factory.mktemp("certs"))
    port, health_port = free_port(), free_port()
    env = {
        **os.environ,
        TLS_ENV: str(certs),
        "RAGMESH_GENERATOR_PORT": str(port),
        "RAGMESH_GENERATOR_HEALTH_PORT": str(health_port),
        "RAGMESH_GENERATOR_METRICS_PORT": "0",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.generator.server"],
        env=env,
        cwd=ROOT_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    health_address = f"127.0.0.1:{health_port}"
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, f"the generator exited with {proc.returncode}"
        try:
            if check(health_address) == health_pb2.HealthCheckResponse.SERVING:
                break
        except grpc.RpcError:
            pass
        assert time.monotonic() < deadline, "the health port never answered SERVING"
        time.sleep(0.3)
    yield proc, f"127.0.0.1:{port}", health_address
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def test_health_is_served_in_plaintext_while_the_stage_port_requires_mtls(generator):
    _, address, health_address = generator
    assert check(health_address) == health_pb2.HealthCheckResponse.SERVING
    with pytest.raises(grpc.RpcError) as refused:
        check(address)
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_the_health_port_serves_nothing_but_health(generator):
    _, _, health_address = generator
    with grpc.insecure_channel(health_address) as channel:
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        with pytest.raises(grpc.RpcError) as err:
            list(reflection.ServerReflectionInfo(iter([request]), timeout=5))
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
        generate = channel.unary_unary("/ragmesh.v1.Generator/Generate")
        with pytest.raises(grpc.RpcError) as err:
            generate(b"", timeout=5)
        assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_the_health_port_stops_with_the_stage(generator):
    proc, _, health_address = generator
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 0
    with pytest.raises(grpc.RpcError) as err:
        check(health_address)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
