"""Mutual TLS behind the gateway, for real: a mesh with RAGMESH_TLS_DIR works end to end, and a stage
refuses a client without the mesh's certificate."""

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.cli.mesh import Mesh
from shared.stubs import gateway_pb2
from shared.stubs import gateway_pb2_grpc as gateway_grpc
from shared.tls import TLS_ENV, channel_credentials, make_certs, stage_channel
from tests.support.mesh import TENANT, ingest_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture(scope="module")
def tls_mesh(tmp_path_factory):
    certs = make_certs(tmp_path_factory.mktemp("certs"))
    mesh = Mesh.on_free_ports(str(tmp_path_factory.mktemp("mesh-mtls")), extra_env={TLS_ENV: str(certs)})
    mesh.start(timeout=240)
    yield mesh, str(certs)
    mesh.stop()


def health(channel) -> int:
    return health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5).status


def test_the_mesh_works_with_mtls_on(tls_mesh, tmp_path):
    mesh, _ = tls_mesh
    (tmp_path / "note.md").write_text("# Note\n\nThe mTLS codename is Marlin.\n")
    with mesh.gateway_channel() as channel:
        gateway = gateway_grpc.GatewayStub(channel)
        assert all(r.ok for r in ingest_paths(gateway, TENANT, [str(tmp_path)]))
        found = gateway.Search(gateway_pb2.SearchRequest(tenant_id=TENANT, query="codename", top_k=3), timeout=60)
    assert found.results[0].chunk.meta.document_id == "note.md"


@pytest.mark.parametrize("stage", ["retriever", "indexer"])
def test_a_stage_refuses_a_client_without_the_mesh_certificate(tls_mesh, tmp_path, stage):
    mesh, certs = tls_mesh
    address = mesh.address(stage)
    with grpc.insecure_channel(address) as plain:  # plaintext
        with pytest.raises(grpc.RpcError) as err:
            health(plain)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    ca = open(f"{certs}/ca.pem", "rb").read()
    with grpc.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=ca)) as no_cert:
        with pytest.raises(grpc.RpcError):  # TLS, but no client certificate
            health(no_cert)
    stranger = make_certs(tmp_path / "other-ca")  # a certificate from another CA
    with grpc.secure_channel(
        address,
        grpc.ssl_channel_credentials(
            root_certificates=ca,
            private_key=(stranger / "gateway-key.pem").read_bytes(),
            certificate_chain=(stranger / "gateway.pem").read_bytes(),
        ),
    ) as foreign:
        with pytest.raises(grpc.RpcError):
            health(foreign)
    with stage_channel(address, stage, "launcher", folder=certs) as member:
        assert health(member) == health_pb2.HealthCheckResponse.SERVING
    assert channel_credentials(certs, "gateway") is not None
