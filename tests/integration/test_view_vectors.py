"""Sentence vectors at ingest, through the real mesh: the indexer stored each chunk's view vectors, the
retriever returns them with the candidates (and the query vector its dense search used), and the maxsim
reranker scores from them without embedding a passage or the query (its ragmesh_rerank_view_vectors_total and
ragmesh_rerank_query_vectors_total counters say where each vector came from); its ranking and per-unit
similarities equal the on-the-fly path's within float16 noise. Callers never receive the vectors."""

import urllib.request

import grpc
import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from shared.stubs import gateway_pb2, reranker_pb2, reranker_pb2_grpc, retriever_pb2, retriever_pb2_grpc
from tests.support.mesh import TENANT

QUESTIONS = [
    "What does error E-4412 mean and how do I fix it?",
    "How much does the Team plan cost per month?",
    "How long do I have to ask for a refund?",
]
# float16 storage moves a similarity of unit-length 384-d vectors by ~1e-4.
TOLERANCE = 2e-3


def _view_counts(mesh, family_name: str = "ragmesh_rerank_view_vectors") -> dict[str, float]:
    with urllib.request.urlopen(mesh.metrics_url("reranker"), timeout=10) as reply:
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


def _rerank(reranker, question: str, candidates, query_embedding=None) -> list:
    request = reranker_pb2.RerankRequest(
        query=question, candidates=candidates, top_n=len(candidates), query_embedding=query_embedding
    )
    return list(reranker.Rerank(request, timeout=120).candidates)


@pytest.mark.parametrize("question", QUESTIONS)
def test_stored_view_vectors_spare_the_reranker_its_embedding(mesh, stages, question):
    retriever, reranker = stages
    retrieved = retriever.Retrieve(
        retriever_pb2.RetrieveRequest(tenant_id=TENANT, query=question, top_k=50), timeout=60
    )
    candidates = list(retrieved.candidates)
    assert candidates
    model_id = retrieved.embedding_model_id  # the mesh's one embedding model: the reranker's too
    for c in candidates:
        assert c.chunk.HasField("views"), c.chunk.chunk_id
        views = c.chunk.views
        assert views.model_id == model_id and views.dtype == "float16" and views.dim == 384
        assert len(views.vectors) == 2 * views.dim * len(views.unit_indices) > 0

    query = retrieved.query_embedding
    assert query.model_id == model_id and query.dtype == "float32" and len(query.vector) == 4 * query.dim == 4 * 384

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
