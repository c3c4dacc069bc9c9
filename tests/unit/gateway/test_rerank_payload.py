"""What the gateway sends the retriever and reranker, and how it reads the reranker's answer: view vectors only for
the head the reranker says it reads, no section text to the reranker, and the reranker's order and scores laid over
the gateway's own full chunks."""

import pytest

from services.gateway.funnel import Funnel, _in_reranked_order
from shared.errors import RagmeshError
from shared.stubs import common_pb2, gateway_pb2, reranker_pb2, retriever_pb2

NOWHERE = {stage: "127.0.0.1:9" for stage in ("chunker", "indexer", "retriever", "reranker", "generator")}


def _candidate(i: int) -> common_pb2.ScoredChunk:
    return common_pb2.ScoredChunk(
        chunk=common_pb2.Chunk(
            chunk_id=f"c{i}",
            body=f"body {i}",
            section_text=f"the section around body {i}",
            views=common_pb2.ViewVectors(model_id="m", dtype="float16", dim=1, vectors=b"\0\0", unit_indices=[0]),
        ),
        scores=common_pb2.StageScores(fused_rank=i + 1),
    )


class _Retriever:
    stage, address = "retriever", "127.0.0.1:9"

    def __init__(self):
        self.requests: list[retriever_pb2.RetrieveRequest] = []

    def call(self, method, request, context=None, share=1.0, cap=None):
        self.requests.append(request)
        return retriever_pb2.RetrieveResponse(candidates=[_candidate(i) for i in range(5)])


class _Reranker:
    """Reverses the order, as a reranker that returns scores only, reads the first 3 candidates and the views of
    the first 2 (a real one keeps the unread tail in order; reversing everything shows the scores are laid by id)."""

    stage, address = "reranker", "127.0.0.1:9"

    def __init__(self):
        self.requests: list[reranker_pb2.RerankRequest] = []
        self.says: int | None = 2

    def call(self, method, request, context=None, share=1.0, cap=None):
        self.requests.append(request)
        ranked = [
            common_pb2.ScoredChunk(
                chunk=common_pb2.Chunk(chunk_id=c.chunk.chunk_id),
                scores=common_pb2.StageScores(fused_rank=c.scores.fused_rank, rerank_rank=rank, rerank_score=-rank),
            )
            for rank, c in enumerate(reversed(request.candidates), start=1)
        ]
        response = reranker_pb2.RerankResponse(candidates=ranked[: request.top_n], model_id="r")
        if self.says is not None:
            response.view_vectors_top_k, response.candidates_read = self.says, self.says + 1
        return response


@pytest.fixture
def funnel():
    funnel = Funnel(NOWHERE, 0.35)
    funnel.retriever, funnel.reranker = _Retriever(), _Reranker()
    return funnel


def _search(funnel, rerank: bool) -> gateway_pb2.SearchResponse:
    return funnel.search(gateway_pb2.SearchRequest(tenant_id="acme", query="q", top_k=3, rerank=rerank), None)


def test_the_retriever_sends_view_vectors_only_for_what_the_reranker_reads(funnel):
    _search(funnel, rerank=True)  # the reranker has not said yet: every candidate's views
    _search(funnel, rerank=True)  # it said 2
    _search(funnel, rerank=False)  # nothing reads them
    funnel.reranker.says = None  # a reranker that does not say (an older build)
    _search(funnel, rerank=True)
    _search(funnel, rerank=True)
    sent = funnel.retriever.requests
    assert not sent[0].HasField("view_vectors_top_k")
    assert sent[1].HasField("view_vectors_top_k") and sent[1].view_vectors_top_k == 2
    assert sent[2].HasField("view_vectors_top_k") and sent[2].view_vectors_top_k == 0
    assert sent[3].view_vectors_top_k == 2  # what it said last
    assert not sent[4].HasField("view_vectors_top_k")  # it no longer says: every candidate's views again


def test_past_what_the_reranker_reads_it_gets_ids_and_scores_alone(funnel):
    _search(funnel, rerank=True)  # it has not said yet: every candidate whole
    _search(funnel, rerank=True)  # it reads 3
    first, second = funnel.reranker.requests
    assert all(c.chunk.body for c in first.candidates)
    assert [c.chunk.chunk_id for c in second.candidates] == [f"c{i}" for i in range(5)]
    assert all(c.chunk.body and c.chunk.HasField("views") for c in second.candidates[:3])
    for c in second.candidates[3:]:
        assert c.chunk == common_pb2.Chunk(chunk_id=c.chunk.chunk_id)
        assert c.scores.fused_rank == int(c.chunk.chunk_id[1:]) + 1
    funnel.reranker.says = None
    _search(funnel, rerank=True)
    _search(funnel, rerank=True)  # it no longer says: every candidate whole again
    assert all(c.chunk.body for c in funnel.reranker.requests[-1].candidates)


def test_the_reranker_gets_no_section_text_and_returns_scores_only(funnel):
    results = _search(funnel, rerank=True).results
    request = funnel.reranker.requests[0]
    assert request.scores_only
    assert [c.chunk.chunk_id for c in request.candidates] == [f"c{i}" for i in range(5)]
    assert not any(c.chunk.section_text for c in request.candidates)
    assert all(c.chunk.body and c.chunk.HasField("views") for c in request.candidates)  # what rerankers read
    # The caller gets the reranker's order and scores over the full chunks (section text kept, views dropped).
    assert [r.chunk.chunk_id for r in results] == ["c4", "c3", "c2"]
    assert [r.scores.rerank_rank for r in results] == [1, 2, 3]
    assert [r.scores.fused_rank for r in results] == [5, 4, 3]
    assert all(r.chunk.section_text == f"the section around {r.chunk.body}" for r in results)
    assert not any(r.chunk.HasField("views") for r in results)


def test_a_chunk_the_reranker_was_not_given_is_an_error():
    ranking = [common_pb2.ScoredChunk(chunk=common_pb2.Chunk(chunk_id="elsewhere"))]
    with pytest.raises(RagmeshError, match="elsewhere"):
        _in_reranked_order([_candidate(0)], ranking)


def test_the_retriever_and_the_reranker_read_a_question_without_its_closing_question_marks(funnel):
    """A "?" added to each labelled question that had none changed 14 outcomes through the embedding and the
    reranker's scores; it says how the question is asked, not what about."""
    for query in ("hotel cap nyc??", "hotel cap nyc ?", "hotel cap nyc"):
        funnel.search(gateway_pb2.SearchRequest(tenant_id="acme", query=query, top_k=3, rerank=True), None)
    assert {r.query for r in funnel.retriever.requests} == {"hotel cap nyc"}
    assert {r.query for r in funnel.reranker.requests} == {"hotel cap nyc"}
    funnel.search(gateway_pb2.SearchRequest(tenant_id="acme", query="?", top_k=3, rerank=True), None)
    assert funnel.retriever.requests[-1].query == "?"  # nothing else to search for
