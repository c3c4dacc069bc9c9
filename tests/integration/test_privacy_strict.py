"""RAGMESH_PRIVACY=strict on a whole mesh: a document and questions full of names, e-mail addresses, phone
numbers and secrets are ingested, asked, searched and rated; then every stage's log, every byte a real OTLP
receiver was sent, every stage's metrics page and the answer log's raw files are searched for them: zero hits
(the caller still gets the real answer)."""

import os
import re
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest

from services.cli.mesh import Mesh
from shared.config import STAGES
from shared.stubs import gateway_pb2, gateway_pb2_grpc
from tests.integration.otlp_receiver import OtlpReceiver
from tests.integration.test_llm_generation import llama_server  # noqa: F401 - the same real server, as a fixture
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
    return [s for s in SECRETS if (_number_in(s, lowered) if s.isdigit() else s.lower().encode() in lowered)]


def _number_in(number: str, data: bytes) -> bool:
    """The number as a number, not as digits inside another one: a metrics page's float 0.018400731 or timestamp
    1764718400.5 does not hold the amount 18400 (seen: a false leak on the gateway's page)."""
    return re.search(rb"(?<![0-9.])" + number.encode() + rb"(?![0-9])", data) is not None


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


class RecordingProxy:
    """A forwarding HTTP proxy in front of the real OpenAI-compatible server, keeping every request body it
    passed on: what left the mesh's process."""

    def __init__(self, upstream: str):
        import http.server
        import threading

        self.bodies: list[bytes] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _forward(self, body: bytes | None) -> None:
                if body:
                    proxy.bodies.append(body)
                request = urllib.request.Request(upstream + self.path, data=body, method=self.command)
                request.add_header("Content-Type", self.headers.get("Content-Type", "application/json"))
                try:
                    with urllib.request.urlopen(request, timeout=300) as reply:
                        status, data, kind = reply.status, reply.read(), reply.headers.get("Content-Type", "")
                except urllib.error.HTTPError as err:
                    status, data, kind = err.code, err.read(), err.headers.get("Content-Type", "")
                self.send_response(status)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 - http.server's naming
                self._forward(None)

            def do_POST(self):  # noqa: N802
                self._forward(self.rfile.read(int(self.headers.get("Content-Length", "0"))))

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()


def test_an_external_generator_sees_pseudonyms_only(llama_server, tmp_path_factory, tmp_path):  # noqa: F811
    """The openai backend against llama.cpp's OpenAI-compatible server (the one the LLM tests run), through
    a recording proxy: names, e-mail addresses and phone numbers the detector finds never reach it."""
    proxy = RecordingProxy(llama_server)
    mesh = Mesh.on_free_ports(
        str(tmp_path_factory.mktemp("strict-openai")),
        extra_env={
            "RAGMESH_PRIVACY": "strict",
            "RAGMESH_GENERATOR_BACKEND": "openai",
            "RAGMESH_GENERATOR_OPENAI_URL": proxy.url,
            "RAGMESH_GATEWAY_GENERATOR_TIMEOUT_SECONDS": "280",
            "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
            "RAGMESH_GATEWAY_ABSTAIN_THRESHOLD": "0",
        },
    )
    try:
        mesh.start(timeout=300)
        mesh.key_for(TENANT)
        channel = mesh.gateway_channel()
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        (tmp_path / "account-notes.md").write_text(DOCUMENT)
        assert all(r.ok for r in ingest_paths(gateway, TENANT, [str(tmp_path)]))
        try:
            answered = gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=QUESTIONS[0]), timeout=300)
        except grpc.RpcError as err:
            # What reached the model is the point here; a backend that refuses the request's format still got it.
            # (A small CPU model on a busy machine may also run out of time; the request was still sent.)
            assert "generator stage" in (err.details() or ""), err
            answered = None
        channel.close()
    finally:
        mesh.stop()
        proxy.stop()
    sent = b"".join(proxy.bodies)
    assert b"Contact-" in sent  # the question and passages did reach the model, pseudonymised
    detected = ["Kwame Mensah", "mirela.vasquez@brannock.co.uk", "+44 20 7946 0958", "415-555-0132"]
    assert [v for v in detected if v.encode() in sent] == []
    if answered is not None:  # restored for the caller
        assert "Contact-" not in answered.answer.text and "Phone-" not in answered.answer.text
    stored = (Path(mesh.data_dir) / "privacy" / f"{TENANT}.map").read_bytes()
    assert b"Kwame" not in stored and b"Contact" not in stored
