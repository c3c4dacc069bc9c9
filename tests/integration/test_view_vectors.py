"""Sentence vectors at ingest, through the real mesh: the indexer stored each chunk's view vectors, the
retriever returns them with the candidates (and the query vector its dense search used), and the maxsim
reranker scores from them without embedding a passage or the query (its ragmesh_rerank_view_vectors_total and
ragmesh_rerank_query_vectors_total counters say where each vector came from); its ranking and per-unit
similarities equal the on-the-fly path's within float16 noise. Callers never receive the vectors. A cross-encoder
that fuses the maxsim rank passes the retriever's query vector on to it as well (the Reranker protocol's run)."""

import json
import os
import shutil
import urllib.request

import grpc
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from services.cli.mesh import free_port
from services.reranker.cross_encoder import CARD_FILE, serving_variant
from services.reranker.triton_server import rerankers_root
from shared.stubs import common_pb2, gateway_pb2, reranker_pb2, reranker_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from tests.support.mesh import TENANT, extra_stages

QUESTIONS = [
    "What does error E-4412 mean and how do I fix it?",
    "How much does the Team plan cost per month?",
    "How long do I have to ask for a refund?",
]
# float16 storage moves a similarity of unit-length 384-d vectors by ~1e-4.
TOLERANCE = 2e-3


def _view_counts(mesh, family_name: str = "ragmesh_rerank_view_vectors") -> dict[str, float]:
    return _counts_at(mesh.metrics_url("reranker"), family_name)


def _counts_at(url: str, family_name: str) -> dict[str, float]:
    """The counter family's totals by source, as a reranker's metrics endpoint reports them."""
    with urllib.request.urlopen(url, timeout=10) as reply:
        text = reply.read().decode()
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        if family.name == family_name:
            for sample in family.samples:
                if sample.name.endswith("_total"):
                    counts[sample.labels["source"]] = sample.value
    return counts


@pytest.fixture(scope="module")
def stages(mesh, ingested):
    with grpc.insecure_channel(mesh.address("retriever")) as r, grpc.insecure_channel(mesh.address("reranker")) as k:
        yield retriever_pb2_grpc.RetrieverStub(r), reranker_pb2_grpc.RerankerStub(k)


def _query_counts(mesh) -> dict[str, float]:
    return _view_counts(mesh, "ragmesh_rerank_query_vectors")


def _retrieve(retriever, question: str, **fields) -> retriever_pb2.RetrieveResponse:
    """The retriever's 50 candidates for the question (and the query vector its dense search used)."""
    return retriever.Retrieve(
        retriever_pb2.RetrieveRequest(tenant_id=TENANT, query=question, top_k=50, **fields), timeout=60
    )


def _rerank_all(reranker, question: str, candidates, query_embedding=None, scores_only=False):
    """The reranker's answer for every candidate in order."""
    request = reranker_pb2.RerankRequest(
        query=question,
        candidates=candidates,
        top_n=len(candidates),
        query_embedding=query_embedding,
        scores_only=scores_only,
    )
    return reranker.Rerank(request, timeout=120)


def _rerank(reranker, question: str, candidates, query_embedding=None) -> list:
    return list(_rerank_all(reranker, question, candidates, query_embedding).candidates)


@pytest.mark.parametrize("question", QUESTIONS)
def test_stored_view_vectors_spare_the_reranker_its_embedding(mesh, stages, question):
    retriever, reranker = stages
    retrieved = _retrieve(retriever, question)
    candidates = list(retrieved.candidates)
    assert candidates
    model_id = retrieved.embedding_model_id  # the mesh's one embedding model: the reranker's too
    for c in candidates:
        assert c.chunk.HasField("views"), c.chunk.chunk_id
        views = c.chunk.views
        assert views.model_id == model_id and views.dtype == "float16" and views.dim == 384
        assert len(views.vectors) == 2 * views.dim * len(views.unit_indices) > 0

    query = retrieved.query_embedding
    # The question was embedded by the model's int8 export (the default RAGMESH_EMBED_QUERY_VARIANT), and says so.
    assert query.model_id == f"{model_id}+int8-queries"
    assert query.dtype == "float32" and len(query.vector) == 4 * query.dim == 4 * 384

    before, queries_before = _view_counts(mesh), _query_counts(mesh)
    stored = _rerank(reranker, question, candidates, query)
    after, queries_after = _view_counts(mesh), _query_counts(mesh)
    assert queries_after.get("given", 0) - queries_before.get("given", 0) == 1
    assert queries_after.get("embedded", 0) == queries_before.get("embedded", 0)
    head = min(len(candidates), 20)  # the reranker's rescore_k
    assert after.get("stored", 0) - before.get("stored", 0) == head
    assert after.get("embedded", 0) == before.get("embedded", 0)
    assert after.get("cache", 0) == before.get("cache", 0)
    assert not any(c.chunk.HasField("views") for c in stored)  # not echoed back

    # The same candidates without their vectors, and no query vector: the reranker embeds them at query time (or
    # reads the views from its cache, filled by an earlier embedding): the path every request took before.
    for c in candidates:
        c.chunk.ClearField("views")
    on_the_fly = _rerank(reranker, question, candidates)
    later = _view_counts(mesh)
    assert _query_counts(mesh).get("embedded", 0) - queries_after.get("embedded", 0) == 1
    assert later.get("stored", 0) == after.get("stored", 0)
    assert later.get("embedded", 0) + later.get("cache", 0) - after.get("embedded", 0) - after.get("cache", 0) == head

    # The same order, unless two rescored candidates tie within float16 noise (e.g. two chunks under one title).
    if [c.chunk.chunk_id for c in stored] != [c.chunk.chunk_id for c in on_the_fly]:
        rescored = {c.chunk.chunk_id for c in candidates[:head]}
        scores = np.sort([c.scores.rerank_score for c in on_the_fly if c.chunk.chunk_id in rescored])
        assert np.min(np.diff(scores)) < TOLERANCE, "the order differs without a near tie"
    for a, b in zip(stored, on_the_fly, strict=True):
        assert a.scores.rerank_score == pytest.approx(b.scores.rerank_score, abs=TOLERANCE)
        assert len(a.scores.unit_similarity) == len(b.scores.unit_similarity)
        np.testing.assert_allclose(a.scores.unit_similarity, b.scores.unit_similarity, atol=TOLERANCE)
    assert any(len(c.scores.unit_similarity) for c in stored)


def test_views_travel_only_for_the_head_the_reranker_reads(mesh, stages):
    """The reranker says how many candidates (and their views) it reads; the retriever, asked for that many views,
    sends no more, and the reranker, sent the rest as ids and scores alone, still embeds nothing. Asked for scores
    only, it returns each chunk's id and the same order and scores as for the whole candidates."""
    retriever, reranker = stages
    question = QUESTIONS[2]
    retrieved = _retrieve(retriever, question)
    full = _rerank_all(reranker, question, retrieved.candidates, retrieved.query_embedding)
    assert full.HasField("view_vectors_top_k") and full.view_vectors_top_k == 20  # the default rescore_k
    assert full.HasField("candidates_read") and full.candidates_read == 20

    trimmed = _retrieve(retriever, question, view_vectors_top_k=20)
    assert len(trimmed.candidates) == len(retrieved.candidates) > 20
    assert [c.chunk.chunk_id for c in trimmed.candidates] == [c.chunk.chunk_id for c in retrieved.candidates]
    assert all(c.chunk.HasField("views") for c in trimmed.candidates[:20])
    assert not any(c.chunk.HasField("views") for c in trimmed.candidates[20:])
    assert trimmed.ByteSize() < retrieved.ByteSize()

    before = _view_counts(mesh)
    # What the gateway sends: past the 20 it reads, each candidate as its id and scores alone.
    sent = [*trimmed.candidates[:20]] + [
        common_pb2.ScoredChunk(chunk=common_pb2.Chunk(chunk_id=c.chunk.chunk_id), scores=c.scores)
        for c in trimmed.candidates[20:]
    ]
    scores_only = _rerank_all(reranker, question, sent, trimmed.query_embedding, scores_only=True)
    after = _view_counts(mesh)
    assert after.get("stored", 0) - before.get("stored", 0) == 20
    assert after.get("embedded", 0) == before.get("embedded", 0)
    assert [c.chunk.chunk_id for c in scores_only.candidates] == [c.chunk.chunk_id for c in full.candidates]
    for given, whole in zip(scores_only.candidates, full.candidates, strict=True):
        assert given.chunk == common_pb2.Chunk(chunk_id=whole.chunk.chunk_id)  # nothing but the id
        assert given.scores.rerank_score == pytest.approx(whole.scores.rerank_score, abs=1e-6)
        assert given.scores.rerank_rank == whole.scores.rerank_rank
        assert list(given.scores.unit_similarity) == pytest.approx(list(whole.scores.unit_similarity), nan_ok=True)

    with pytest.raises(grpc.RpcError) as bad:
        retriever.Retrieve(
            retriever_pb2.RetrieveRequest(tenant_id=TENANT, query=question, view_vectors_top_k=-1), timeout=60
        )
    assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "view_vectors_top_k" in bad.value.details()


def test_callers_never_receive_view_vectors(mesh, gateway, ingested):
    question = QUESTIONS[0]
    queries_before = _query_counts(mesh)
    for rerank in (False, True):
        found = gateway.Search(gateway_pb2.SearchRequest(tenant_id=TENANT, query=question, rerank=rerank), timeout=120)
        assert found.results and not any(r.chunk.HasField("views") for r in found.results)
    # The gateway passed the retriever's query vector on: the reranked Search did not embed the question.
    queries_after = _query_counts(mesh)
    assert queries_after.get("given", 0) - queries_before.get("given", 0) == 1
    assert queries_after.get("embedded", 0) == queries_before.get("embedded", 0)
    asked = gateway.Ask(
        gateway_pb2.AskRequest(tenant_id=TENANT, question=question, include_candidates=True), timeout=120
    )
    passages = [*asked.candidates, *asked.context, *asked.suggested_reading]
    assert passages and not any(p.chunk.HasField("views") for p in passages)
    # What answer selection reads is still there.
    assert any(len(p.scores.unit_similarity) for p in asked.candidates)
    chunk = gateway.GetChunk(
        retriever_pb2.GetChunkRequest(tenant_id=TENANT, chunk_id=asked.candidates[0].chunk.chunk_id), timeout=60
    )
    assert chunk.chunk.chunk_id and not chunk.chunk.HasField("views")


@pytest.fixture(scope="module")
def fusing_cross_encoder(tmp_path_factory):
    """A reranker process serving the sample cross-encoder (what `make reranker` trains) with a card that fuses the
    maxsim rank as a third signal, and its metrics address: the path where maxsim runs inside another reranker."""
    if not (rerankers_root() / "sample" / CARD_FILE).is_file():
        pytest.fail(f"no trained cross-encoder in {rerankers_root() / 'sample'}: run `make reranker` (make test does)")
    card = json.loads((rerankers_root() / "sample" / CARD_FILE).read_text())
    card["enabled"], card["fusion"] = True, {**card["fusion"], "maxsim_weight": 0.5}
    folder = tmp_path_factory.mktemp("ce-maxsim") / "sample"
    folder.mkdir()
    for name in ("tokenizer.json", serving_variant(card)["file"]):
        shutil.copy2(rerankers_root() / "sample" / name, folder / name)
    (folder / CARD_FILE).write_text(json.dumps(card))
    port, metrics_port = free_port(), free_port()
    env = {
        **os.environ,
        "RAGMESH_RERANKER_PORT": str(port),
        "RAGMESH_RERANKER_METRICS_PORT": str(metrics_port),
        "RAGMESH_RERANKER_MODEL": "cross-encoder",
        "RAGMESH_RERANKER_CROSS_ENCODER": str(folder),
    }
    with extra_stages(["reranker"], env, port, reranker_pb2_grpc.RerankerStub) as stub:
        yield stub, f"http://127.0.0.1:{metrics_port}/metrics"


def test_the_cross_encoders_fused_maxsim_uses_the_retrievers_query_vector(stages, fusing_cross_encoder):
    retriever, _ = stages
    reranker, metrics_url = fusing_cross_encoder
    question = QUESTIONS[1]
    retrieved = _retrieve(retriever, question)
    candidates = list(retrieved.candidates)
    assert candidates and retrieved.HasField("query_embedding")

    def counts() -> dict[str, float]:
        return _counts_at(metrics_url, "ragmesh_rerank_query_vectors")

    before = counts()
    given = _rerank(reranker, question, candidates, retrieved.query_embedding)
    after = counts()
    assert given and "+maxsim" in reranker.Rerank(reranker_pb2.RerankRequest(query="id", candidates=[])).model_id
    assert after.get("given", 0) - before.get("given", 0) == 1  # maxsim scored with the retriever's vector
    assert after.get("embedded", 0) == before.get("embedded", 0)  # and did not embed the question again

    # Without the vector, the fused maxsim embeds the question itself (what every request did before).
    without = _rerank(reranker, question, candidates)
    assert counts().get("embedded", 0) - after.get("embedded", 0) == 1
    # The same scores either way (float32 query vectors from the same model).
    for a, b in zip(given, without, strict=True):
        assert a.chunk.chunk_id == b.chunk.chunk_id
        assert a.scores.rerank_score == pytest.approx(b.scores.rerank_score, abs=1e-5)


@pytest.fixture(scope="module")
def fp32_query_reranker():
    """A maxsim reranker process that embeds questions with the fp32 model itself, and its metrics address."""
    port, metrics_port = free_port(), free_port()
    env = {
        **os.environ,
        "RAGMESH_RERANKER_PORT": str(port),
        "RAGMESH_RERANKER_METRICS_PORT": str(metrics_port),
        "RAGMESH_EMBED_QUERY_VARIANT": "fp32",
    }
    with extra_stages(["reranker"], env, port, reranker_pb2_grpc.RerankerStub) as stub:
        yield stub, f"http://127.0.0.1:{metrics_port}/metrics"


def test_a_query_vector_of_another_export_is_not_used(stages, fp32_query_reranker):
    """The retriever's question vector comes from the int8 export; a reranker that embeds questions with the fp32
    model embeds the question itself rather than score with it, and its model id (which a calibrated threshold is
    bound to) is not the default reranker's."""
    retriever, default = stages
    reranker, metrics_url = fp32_query_reranker
    question = QUESTIONS[0]
    retrieved = _retrieve(retriever, question)
    candidates = list(retrieved.candidates)
    assert candidates and retrieved.query_embedding.model_id.endswith("+int8-queries")
    before = _counts_at(metrics_url, "ragmesh_rerank_query_vectors")
    own = _rerank_all(reranker, question, candidates, retrieved.query_embedding)
    after = _counts_at(metrics_url, "ragmesh_rerank_query_vectors")
    assert after.get("embedded", 0) - before.get("embedded", 0) == 1
    assert after.get("given", 0) == before.get("given", 0)
    given = _rerank_all(default, question, candidates, retrieved.query_embedding)
    assert given.model_id == own.model_id + "+int8-queries", (given.model_id, own.model_id)
    # The two exports rank the same head alike: scores within the int8 export's distance from fp32.
    by_id = {c.chunk.chunk_id: c.scores.rerank_score for c in own.candidates}
    for c in given.candidates[:5]:
        assert c.scores.rerank_score == pytest.approx(by_id[c.chunk.chunk_id], abs=0.03)
