"""Erasure with proof on a real mesh, for each index backend (embedded SQLite, and a real OpenSearch node):
a document is ingested, asked about (the answer log and the retriever's k-NN view now hold it; the reranker
scores it from the view vectors stored with its chunks, so its cache does not), rated with feedback and
exported as an evaluation case; `ragmesh erase` removes it, and the test checks, independently of the report,
that none of its text, chunk ids or view vectors is left in any file under the data folder (the raw SQLite
files and their -wal included), in the export, or in OpenSearch. A second test erases a whole tenant."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import grpc
import pytest
from opensearchpy import OpenSearch

from services.cli.mesh import ROOT_DIR, Mesh
from shared.credentials import API_KEY_ENV
from shared.stubs import gateway_pb2, gateway_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from tests.support.mesh import ingest_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OPENSEARCH_URL = os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200")
SECRET_DOC = """# Kestrelwood settlement

Mirela Vasquez-Oduya signed the Kestrelwood indemnity addendum 7741-QX on behalf of Brannock Holdings.

## Escrow

The escrow release requires countersignature by Ottoline Farraday within nineteen business days.
The escrow agent is Quillfeather Trust of Harrowgate, account reference HQ-5521-ZETA.
"""
OTHER_DOC = """# Travel policy

Employees book economy class for flights under six hours. Hotel stays are reimbursed up to the city rate.
"""
# Runs of the secret document's text the test looks for itself (none of them is in a question it asks).
SECRET_RUNS = [
    "Mirela Vasquez-Oduya signed",
    "Brannock Holdings",
    "Ottoline Farraday within nineteen",
    "Quillfeather Trust of Harrowgate",
    "HQ-5521-ZETA",
]
QUESTION = "who must countersign the escrow release?"


def _files_holding(folder: str, needles: list[str]) -> dict[str, list[str]]:
    """Every file under `folder` whose raw bytes hold one of the needles (erasure reports excluded: they
    are checked on their own)."""
    found: dict[str, list[str]] = {}
    for path in Path(folder).rglob("*"):
        if not path.is_file() or "erasure-reports" in path.parts:
            continue
        data = path.read_bytes()
        hits = [n for n in needles if n.encode() in data]
        if hits:
            found[str(path)] = hits
    return found


def _files_holding_bytes(folder: str, needles: list[bytes]) -> list[str]:
    """Every file under `folder` whose raw bytes hold one of the (binary) needles, erasure reports excluded."""
    return [
        str(path)
        for path in Path(folder).rglob("*")
        if path.is_file() and "erasure-reports" not in path.parts and any(n in path.read_bytes() for n in needles)
    ]


def _stored_view_vectors(mesh: Mesh, tenant: str, chunk_ids: list[str]) -> list[bytes]:
    """The view vectors the index stored with these chunks, as the retriever returns them to the reranker."""
    with grpc.insecure_channel(mesh.address("retriever")) as channel:
        found = retriever_pb2_grpc.RetrieverStub(channel).Retrieve(
            retriever_pb2.RetrieveRequest(tenant_id=tenant, query=QUESTION, top_k=50), timeout=60
        )
    return [
        c.chunk.views.vectors for c in found.candidates if c.chunk.chunk_id in chunk_ids and c.chunk.HasField("views")
    ]


def _cli(mesh: Mesh, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != API_KEY_ENV}
    env["RAGMESH_DATA_DIR"] = mesh.data_dir
    argv = [sys.executable, "-m", "services.cli.main", *args, "--gateway", mesh.address("gateway"), "--timeout", "300"]
    return subprocess.run(argv, cwd=ROOT_DIR, env=env, capture_output=True, text=True, timeout=400)


# Every question is answered (no abstention gate): the answer log must hold the document as context.
ANSWER_ALWAYS = {"RAGMESH_GATEWAY_CALIBRATION_FILE": "none", "RAGMESH_GATEWAY_ABSTAIN_THRESHOLD": "0"}


# The OpenSearch mesh's erasures wait out the index's retention-lease sync: run beside the rest (marker lease_wait).
@pytest.fixture(scope="module", params=["embedded", pytest.param("opensearch", marks=pytest.mark.lease_wait)])
def backend_mesh(request, tmp_path_factory):
    if request.param == "embedded":
        m = Mesh.on_free_ports(str(tmp_path_factory.mktemp("erase-embedded")), extra_env=ANSWER_ALWAYS)
    else:
        prefix = f"ragmesh-erase-{uuid.uuid4().hex[:8]}"
        m = Mesh.on_free_ports(
            str(tmp_path_factory.mktemp("erase-opensearch")),
            extra_env={**ANSWER_ALWAYS, "RAGMESH_INDEX": "opensearch", "RAGMESH_OPENSEARCH_PREFIX": prefix},
        )
        m.opensearch_prefix = prefix
    m.start(timeout=240)
    yield request.param, m
    m.stop()
    if request.param == "opensearch":
        OpenSearch(hosts=[OPENSEARCH_URL]).indices.delete(index=f"{m.opensearch_prefix}-*", ignore_unavailable=True)


@pytest.fixture(scope="module")
def backend_gateway(backend_mesh):
    _, mesh = backend_mesh
    channel = mesh.gateway_channel()
    yield gateway_pb2_grpc.GatewayStub(channel)
    channel.close()


def _ingest(gateway, tenant: str, folder: Path) -> list:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kestrelwood.md").write_text(SECRET_DOC)
    (folder / "travel.md").write_text(OTHER_DOC)
    results = ingest_paths(gateway, tenant, [str(folder)])
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return results


def _opensearch_hits(prefix: str, needles: list[str]) -> int:
    client = OpenSearch(hosts=[OPENSEARCH_URL])
    client.indices.refresh(index=f"{prefix}-*")
    hits = 0
    for needle in needles:
        query = {"bool": {"should": [{"match_phrase": {"search_text": needle}}, {"term": {"chunk_id": needle}}]}}
        hits += client.count(index=f"{prefix}-*", body={"query": query})["count"]
    return hits


def test_erasing_a_document_leaves_nothing_of_it_anywhere(backend_mesh, backend_gateway, tmp_path):
    kind, mesh = backend_mesh
    tenant = "erase-doc"
    mesh.key_for(tenant)
    _ingest(backend_gateway, tenant, tmp_path / "corpus")
    answered = backend_gateway.Ask(
        gateway_pb2.AskRequest(tenant_id=tenant, question=QUESTION, include_candidates=True), timeout=120
    )
    secret_ids = sorted({c.chunk.chunk_id for c in answered.candidates if c.chunk.meta.document_id == "kestrelwood.md"})
    assert secret_ids and any(c.chunk.chunk_id in secret_ids for c in answered.context), (
        answered.answer.abstained,
        answered.answer.reason,
        answered.top_rerank_score,
        [(c.chunk.meta.document_id, c.scores.rerank_score) for c in answered.candidates],
    )
    backend_gateway.Ask(gateway_pb2.AskRequest(tenant_id=tenant, question="what class do employees fly?"), timeout=120)
    backend_gateway.Feedback(
        gateway_pb2.FeedbackRequest(
            tenant_id=tenant,
            answer_id=answered.answer_id,
            rating=gateway_pb2.RATING_THUMBS_DOWN,
            expected_document_id="kestrelwood.md",
            expected_evidence="countersignature by Ottoline Farraday within nineteen business days",
        ),
        timeout=10,
    )
    export = tmp_path / "cases.jsonl"
    assert _cli(mesh, "feedback", "export", "--tenant", tenant, "--out", str(export)).returncode == 0
    needles = SECRET_RUNS + secret_ids
    # The searches below can fail: before the erasure the stores hold the text and the ids.
    assert _files_holding(mesh.data_dir, needles) and "Ottoline Farraday" in export.read_text()
    if kind == "opensearch":
        assert _opensearch_hits(mesh.opensearch_prefix, needles)
    # The reranker read these chunks' view vectors from the index (stored at ingest) instead of embedding and
    # caching them: the index is where they must go from.
    view_vectors = _stored_view_vectors(mesh, tenant, secret_ids)
    assert view_vectors
    if kind == "embedded":
        assert _files_holding_bytes(mesh.data_dir, view_vectors)

    reports = tmp_path / "reports"
    done = _cli(
        mesh,
        "erase",
        "--doc",
        "kestrelwood.md",
        "--tenant",
        tenant,
        "--request-id",
        "DPO-42",
        "--report-dir",
        str(reports),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((reports / "DPO-42.json").read_text())
    assert report["verified"] and report["subject"]["document_ids"] == ["kestrelwood.md"]
    stores = {s["store"]: s for s in report["stores"]}
    assert {f"index:{kind}", "answer_log", "feedback", "exported_cases", "retriever:memory", "reranker:cache"} <= set(
        stores
    )
    assert all(s["clean"] for s in report["stores"]), report["stores"]
    assert stores["answer_log"]["removed"] >= 1 and stores["feedback"]["removed"] == 1
    # Nothing of the document was in the reranker's cache (it scored from the stored view vectors): the report
    # says so rather than claiming a removal.
    assert stores["exported_cases"]["removed"] == 1 and stores["reranker:cache"]["removed"] == 0
    assert report["probes"]["text_runs"] >= 3 and report["lineage"]["chunk_ids"] >= len(secret_ids)
    assert sum(s["probes_checked"] for s in report["stores"]) > 0
    # The report holds neither the erased text nor its chunk ids (nor does the gateway's stored copy).
    stored = Path(mesh.data_dir) / "erasure-reports"
    for path in [reports / "DPO-42.json", reports / "DPO-42.md", stored / "DPO-42.json", stored / "DPO-42.md"]:
        assert not [n for n in needles if n in path.read_text()], path

    # Independently of the report: no file under the data folder, raw SQLite files and -wal included.
    assert _files_holding(mesh.data_dir, needles) == {}
    assert _files_holding_bytes(mesh.data_dir, view_vectors) == []
    assert "Ottoline" not in export.read_text()
    if kind == "opensearch":
        assert _opensearch_hits(mesh.opensearch_prefix, needles) == 0
    again = backend_gateway.Ask(gateway_pb2.AskRequest(tenant_id=tenant, question=QUESTION), timeout=120)
    assert all(c.chunk.meta.document_id != "kestrelwood.md" for c in again.candidates or again.context)
    found = backend_gateway.Search(
        gateway_pb2.SearchRequest(tenant_id=tenant, query="Ottoline Farraday escrow", top_k=20)
    )
    assert [r.chunk.meta.document_id for r in found.results] in ([], ["travel.md"])

    # Idempotent: a second erasure finds nothing to remove and is verified.
    repeat = _cli(mesh, "erase", "--doc", "kestrelwood.md", "--tenant", tenant, "--json")
    assert repeat.returncode == 0, repeat.stderr
    assert all(s["removed"] == 0 for s in json.loads(repeat.stdout)["stores"] if s["store"] != "retriever:memory")
    assert "nothing was stored under 'kestrelwood.md' (already erased, or a mistyped id)" in repeat.stderr
    # A mistyped id erases nothing, verified: the warning names the stored id it resembles.
    typo = _cli(mesh, "erase", "--doc", "travle.md", "--tenant", tenant)
    assert typo.returncode == 0 and "Nothing was stored under this document id" in typo.stdout
    assert "stored ids like it: travel.md" in typo.stderr, typo.stderr


def test_erasing_a_tenant_leaves_other_tenants(backend_mesh, backend_gateway, tmp_path):
    kind, mesh = backend_mesh
    gone, kept = "erase-all", "erase-keep"
    for tenant in (gone, kept):
        mesh.key_for(tenant)
        _ingest(backend_gateway, tenant, tmp_path / tenant)
        backend_gateway.Ask(gateway_pb2.AskRequest(tenant_id=tenant, question=QUESTION), timeout=120)

    refused = _cli(mesh, "erase", "--tenant", gone)
    assert refused.returncode == 2 and "--yes" in refused.stderr  # a whole tenant needs confirming
    done = _cli(mesh, "erase", "--tenant", gone, "--yes", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["verified"] and report["subject"]["scope"] == "tenant"
    assert sorted(report["subject"]["document_ids"]) == ["kestrelwood.md", "travel.md"]
    listed = backend_gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=gone), timeout=30)
    assert list(listed.documents) == []
    still = backend_gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=kept), timeout=30)
    assert sorted(d.document_id for d in still.documents) == ["kestrelwood.md", "travel.md"]
    kept_answer = backend_gateway.Ask(gateway_pb2.AskRequest(tenant_id=kept, question=QUESTION), timeout=120)
    assert any(c.chunk.meta.document_id == "kestrelwood.md" for c in kept_answer.context)
