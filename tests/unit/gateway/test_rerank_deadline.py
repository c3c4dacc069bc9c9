"""A slow reranker degrades an answer instead of failing it, and leaves the caller time to get it."""

import grpc
import pytest

from services.gateway.funnel import RERANK_DEADLINE_SHARE, Funnel
from shared.clients import StageCallError, StageClient
from shared.stubs import common_pb2

NOWHERE = {stage: "127.0.0.1:9" for stage in ("chunker", "indexer", "retriever", "reranker", "generator")}


class _RpcError(grpc.RpcError):
    def __init__(self, code):
        self._code = code

    def code(self):
        return self._code

    def details(self):
        return "Deadline Exceeded"


class _Context:
    def __init__(self, remaining):
        self.remaining = remaining

    def time_remaining(self):
        return self.remaining


class _SlowReranker:
    stage, address = "reranker", "127.0.0.1:9"

    def __init__(self):
        self.shares = []

    def call(self, method, request, context=None, share=1.0, cap=None):
        self.shares.append(share)
        raise StageCallError(self.stage, self.address, _RpcError(grpc.StatusCode.DEADLINE_EXCEEDED))


def _candidates(n):
    return [common_pb2.ScoredChunk(chunk=common_pb2.Chunk(chunk_id=f"c{i}")) for i in range(n)]


def test_a_reranker_past_its_share_of_the_deadline_degrades_to_the_fused_order():
    funnel = Funnel(NOWHERE, 0.35)
    funnel.reranker = _SlowReranker()
    ranked, model_id, reason = funnel._rerank("q", _candidates(5), 3, _Context(remaining=20.0), [])
    assert [c.chunk.chunk_id for c in ranked] == ["c0", "c1", "c2"] and model_id == ""
    assert reason.startswith("reranker too slow")
    assert funnel.reranker.shares == [RERANK_DEADLINE_SHARE] and RERANK_DEADLINE_SHARE < 1


def test_when_the_callers_own_deadline_is_gone_the_timeout_is_the_callers():
    funnel = Funnel(NOWHERE, 0.35)
    funnel.reranker = _SlowReranker()
    with pytest.raises(StageCallError):
        funnel._rerank("q", _candidates(2), 2, _Context(remaining=0.0), [])


def test_stage_calls_take_only_their_share_of_the_callers_remaining_time():
    client = StageClient("reranker", "127.0.0.1:9", lambda channel: None, default_timeout=30.0)
    assert client._timeout(_Context(10.0), 0.5) == 5.0
    assert client._timeout(_Context(100.0), 0.5) == 30.0  # the stage's cap still applies
    assert client._timeout(None, 0.5) == 30.0
    client.close()
