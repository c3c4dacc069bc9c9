"""RAGMESH_PRIVACY=strict on a whole mesh: a document and questions full of names, e-mail addresses, phone
numbers and secrets are ingested, asked, searched and rated; then every stage's log, every byte a real OTLP
receiver was sent, every stage's metrics page and the answer log's raw files are searched for them: zero hits
(the caller still gets the real answer)."""

import os
import urllib.request
from pathlib import Path

import pytest

from services.cli.mesh import Mesh
from shared.config import STAGES
from shared.stubs import gateway_pb2, gateway_pb2_grpc
from tests.integration.otlp_receiver import OtlpReceiver
from tests.support.mesh import ingest_paths

pytestmark = pytest.mark.integration
TENANT = "crm"
DOCUMENT = """# Account notes: Brannock Holdings

Primary contact is Mirela Vasquez-Oduya (mirela.vasquez@brannock.co.uk, +44 20 7946 0958).
Escalations go to Kwame Mensah, phone 415-555-0132. The deal code is ZX-PELICAN-4471.

## Renewal

Kwame Mensah agreed the renewal at 18400 euros a year; the API token is sk-live-7f3c9a1e55b2.
"""
QUESTIONS = [
    "what phone number does Kwame Mensah use for escalations?",
    "what did Kwame Mensah agree for the Brannock Holdings renewal?",
]
SECRETS = [
    "Mirela",
    "Vasquez",
    "mirela.vasquez@brannock.co.uk",
    "7946 0958",
    "Kwame",
    "Mensah",
    "415-555-0132",
    "ZX-PELICAN-4471",
    "sk-live-7f3c9a1e55b2",
    "18400",
    "Brannock",
    "escalations",
    "renewal",
]


class RawOtlpReceiver(OtlpReceiver):
    """The project's OTLP receiver, also keeping every export request's bytes (events and links included)."""

    def __init__(self):
        super().__init__()
        self.raw: list[bytes] = []

    def Export(self, request, context):
        self.raw.append(request.SerializeToString())
        return super().Export(request, context)


@pytest.fixture(scope="module")
def strict_mesh(tmp_path_factory):
    receiver = RawOtlpReceiver()
    endpoint = receiver.start()
    mesh = Mesh.on_free_ports(
        str(tmp_path_factory.mktemp("strict")),
        extra_env={
            "RAGMESH_PRIVACY": "strict",
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "RAGMESH_LOG_LEVEL": "DEBUG",
            # Every question reaches the generator (the answer text is what must not leak).
            "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
            "RAGMESH_GATEWAY_ABSTAIN_THRESHOLD": "0",
        },
    )
    mesh.start(timeout=240)
    yield mesh, receiver
    mesh.stop()
    receiver.stop()


def _hits(data: bytes) -> list[str]:
    lowered = data.lower()
    return [s for s in SECRETS if s.lower().encode() in lowered]


def test_no_text_leaves_a_trace_in_strict_mode(strict_mesh, tmp_path):
    mesh, receiver = strict_mesh
    mesh.key_for(TENANT)
    channel = mesh.gateway_channel()
    gateway = gateway_pb2_grpc.GatewayStub(channel)
    (tmp_path / "account-notes.md").write_text(DOCUMENT)
    assert all(r.ok for r in ingest_paths(gateway, TENANT, [str(tmp_path)]))
    answered = [gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=q), timeout=120) for q in QUESTIONS]
    assert any("415-555-0132" in a.answer.text or "18400" in a.answer.text for a in answered), [
        a.answer.text for a in answered
    ]  # the caller gets the real text
    gateway.Search(gateway_pb2.SearchRequest(tenant_id=TENANT, query="Mirela Vasquez-Oduya e-mail"), timeout=60)
    gateway.Feedback(
        gateway_pb2.FeedbackRequest(
            tenant_id=TENANT,
            answer_id=answered[0].answer_id,
            rating=gateway_pb2.RATING_THUMBS_DOWN,
            comment="Kwame Mensah's number is wrong",
            expected_document_id="account-notes.md",
            expected_evidence="Escalations go to Kwame Mensah, phone 415-555-0132.",
        ),
        timeout=10,
    )
    channel.close()
    pages = {stage: urllib.request.urlopen(mesh.metrics_url(stage), timeout=10).read() for stage in STAGES}
    mesh.stop()  # flushes the stages' span exporters and logs

    # The searches can fail: a plain mesh would hold these (the index itself does, and must).
    index_files = list(Path(mesh.data_dir).glob("index*.sqlite*"))
    assert any(_hits(p.read_bytes()) for p in index_files)
    assert all(pages.values()) and any(b"ragmesh.query.sha256" in data for data in receiver.raw)  # hashed, not absent

    leaks = {}
    for path in Path(mesh.data_dir).rglob("*"):
        if path.is_file() and not path.name.startswith("index"):  # every log, the answer log and its -wal
            found = _hits(path.read_bytes())
            if found:
                leaks[str(path)] = found
    for i, data in enumerate(receiver.raw):
        if _hits(data):
            leaks[f"otlp export {i}"] = _hits(data)
    for stage, page in pages.items():
        if _hits(page):
            leaks[f"metrics {stage}"] = _hits(page)
    assert leaks == {}
    assert any(p.name.endswith(".log") for p in Path(mesh.data_dir).rglob("*")), os.listdir(mesh.data_dir)
