"""Reciprocal rank fusion: score(d) = sum over lists of 1 / (k + rank(d))."""

from shared.index.base import SearchHit
from shared.model import ScoredChunk, StageScores


def reciprocal_rank_fusion(
    bm25: list[SearchHit], dense: list[SearchHit], k: int = 60, limit: int | None = None
) -> list[ScoredChunk]:
    """The fused list, best first, cut to `limit`. It ranks on chunk ids, so only the chunks it returns are read
    from their hits (a backend may build them then)."""
    merged: dict[str, tuple[SearchHit, StageScores]] = {}
    for rank, hit in enumerate(bm25, start=1):
        scores = merged.setdefault(hit.chunk_id, (hit, StageScores()))[1]
        scores.bm25_rank, scores.bm25_score = rank, hit.score
        scores.fused_score += 1.0 / (k + rank)
    for rank, hit in enumerate(dense, start=1):
        scores = merged.setdefault(hit.chunk_id, (hit, StageScores()))[1]
        scores.dense_rank, scores.dense_score = rank, hit.score
        scores.fused_score += 1.0 / (k + rank)
    # Ties (same fused score) keep a deterministic order: best single-list rank, then id.
    order = sorted(
        merged.items(),
        key=lambda item: (
            -item[1][1].fused_score,
            min(r for r in (item[1][1].bm25_rank, item[1][1].dense_rank) if r),
            item[0],
        ),
    )
    fused = []
    for rank, (_, (hit, scores)) in enumerate(order[:limit], start=1):
        scores.fused_rank = rank
        fused.append(ScoredChunk(hit.chunk, scores))
    return fused
