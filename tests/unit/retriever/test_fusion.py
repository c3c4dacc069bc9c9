import pytest

from services.retriever.fusion import reciprocal_rank_fusion
from shared.index.base import SearchHit
from tests.conformance.index_suite import chunk, meta


def hits(*names):
    return [SearchHit(chunk(meta(doc=n), 0, n), score=10.0 - i) for i, n in enumerate(names)]


def test_rrf_scores_and_keeps_every_stage_rank():
    fused = reciprocal_rank_fusion(hits("a", "b", "c"), hits("c", "a", "d"), k=60)
    by_doc = {sc.chunk.meta.document_id: sc for sc in fused}
    assert by_doc["a"].scores.fused_score == pytest.approx(1 / 61 + 1 / 62)
    assert by_doc["c"].scores.fused_score == pytest.approx(1 / 63 + 1 / 61)
    assert by_doc["d"].scores.bm25_rank == 0 and by_doc["d"].scores.dense_rank == 3
    assert [sc.chunk.meta.document_id for sc in fused] == ["a", "c", "b", "d"]
    assert [sc.scores.fused_rank for sc in fused] == [1, 2, 3, 4]


def test_rrf_k_changes_the_balance():
    # With a small k the top of each list dominates; with a large k, agreement between lists wins.
    bm25, dense = hits("x", "a", "both"), hits("y", "b", "c", "both")
    small = [sc.chunk.meta.document_id for sc in reciprocal_rank_fusion(bm25, dense, k=1)]
    large = [sc.chunk.meta.document_id for sc in reciprocal_rank_fusion(bm25, dense, k=1000)]
    assert small[0] in ("x", "y") and large[0] == "both"


def test_single_list_passes_through_in_order():
    fused = reciprocal_rank_fusion(hits("a", "b"), [], k=60)
    assert [sc.chunk.meta.document_id for sc in fused] == ["a", "b"]


def test_only_the_fused_hits_kept_are_built():
    """Fusion ranks on chunk ids; a hit whose chunk is built on first use (the embedded index's) is built only when
    it is among the `limit` it returns."""
    built = []

    def deferred(names):
        out = []
        for i, n in enumerate(names):
            made = chunk(meta(doc=n), 0, n)
            out.append(SearchHit.deferred(made.chunk_id, 10.0 - i, lambda made=made: built.append(made) or made))
        return out

    fused = reciprocal_rank_fusion(deferred(["a", "b", "c"]), deferred(["c", "a", "d"]), k=60, limit=2)
    assert [sc.chunk.meta.document_id for sc in fused] == ["a", "c"]
    assert sorted(c.meta.document_id for c in built) == ["a", "c"]  # "b" and "d" never built, each kept one once
    assert [sc.scores.fused_rank for sc in fused] == [1, 2]
