"""CrossEncoderReranker's funnel logic: the cross-encoder and maxsim signals, fused as the card says.

The scorer and the maxsim ranker here return fixed scores so the fusion and the overlap can be checked
exactly; the real models behind them are exercised in tests/integration/test_triton_reranker.py.
"""

import threading

import numpy as np
import pytest

from services.reranker import fusion
from services.reranker.cross_encoder import CrossEncoderReranker
from shared.model import Chunk, DocumentMeta, ScoredChunk, StageScores

CE_SCORES = np.array([0.1, 2.0, -1.0, 0.5, 1.5], dtype=np.float32)
MAXSIM_SCORES = np.array([0.1, 0.2, 0.9, 0.8, -np.inf], dtype=np.float32)


def _candidates(n=5):
    meta = DocumentMeta(tenant_id="t", document_id="d")
    return [
        ScoredChunk(
            Chunk(f"c{i}", meta, [], f"passage {i}", f"passage {i}", 0, 9, "", 0, i), StageScores(fused_rank=i + 1)
        )
        for i in range(n)
    ]


class FixedScorer:
    model_id, model_version, weight, k = "ce/fixed", "1", 2.0, 60

    def __init__(self, maxsim_weight, maxsim_started=None):
        self.maxsim_weight = maxsim_weight
        self.maxsim_started = maxsim_started

    def warm_up(self):
        pass

    def score(self, query, passages):
        if self.maxsim_started is not None:
            # Waits for the maxsim signal to be under way: run sequentially, this would time out.
            assert self.maxsim_started.wait(10), "maxsim did not start while the cross-encoder was scoring"
        return CE_SCORES[: len(passages)]


class FixedMaxSim:
    def __init__(self, started=None, error=None):
        self.started, self.error = started, error

    def warm_up(self):
        pass

    def head_scores(self, query, head, query_vector=None):
        if self.started is not None:
            self.started.set()
        if self.error:
            raise self.error
        return MAXSIM_SCORES[: len(head)]


def _ids(ranked):
    return [sc.chunk.chunk_id for sc in ranked]


def test_the_maxsim_rank_is_a_third_signal_with_the_cards_weight():
    reranker = CrossEncoderReranker(FixedScorer(maxsim_weight=0.5), rescore_k=5, maxsim_factory=FixedMaxSim)
    expected = fusion.reorder(_candidates(), [], CE_SCORES, 2.0, 60, ((MAXSIM_SCORES, 0.5),))
    assert _ids(reranker.run("q", _candidates(), top_n=5)) == _ids(expected)
    assert _ids(expected) != _ids(fusion.reorder(_candidates(), [], CE_SCORES, 2.0, 60))  # the signal matters


def test_without_a_maxsim_weight_only_the_cross_encoder_is_fused():
    reranker = CrossEncoderReranker(FixedScorer(maxsim_weight=0.0), rescore_k=5, maxsim_factory=None)
    expected = fusion.reorder(_candidates(), [], CE_SCORES, 2.0, 60)
    assert _ids(reranker.run("q", _candidates(), top_n=3)) == _ids(expected)[:3]


def test_maxsim_runs_while_the_cross_encoder_scores():
    started = threading.Event()
    reranker = CrossEncoderReranker(
        FixedScorer(maxsim_weight=0.5, maxsim_started=started), rescore_k=5, maxsim_factory=lambda: FixedMaxSim(started)
    )
    assert len(reranker.run("q", _candidates(), top_n=5)) == 5


def test_a_maxsim_failure_fails_the_request_instead_of_dropping_the_signal():
    reranker = CrossEncoderReranker(
        FixedScorer(maxsim_weight=0.5),
        rescore_k=5,
        maxsim_factory=lambda: FixedMaxSim(error=RuntimeError("embedder died")),
    )
    with pytest.raises(RuntimeError, match="embedder died"):
        reranker.run("q", _candidates(), top_n=5)
