"""Reciprocal rank fusion: score(d) = sum over lists of 1 / (k + rank(d))."""

from shared.index.base import SearchHit
from shared.model import ScoredChunk, StageScores


def reciprocal_rank_fusion(bm25: list[SearchHit], dense: list[SearchHit], k: int = 60) -> list[ScoredChunk]:
    merged: dict[str, ScoredChunk] = {}
    for rank, hit in enumerate(bm25, start=1):
        entry = merged.setdefault(hit.chunk.chunk_id, ScoredChunk(hit.chunk, StageScores()))
        entry.scores.bm25_rank, entry.scores.bm25_score = rank, hit.score
        entry.scores.fused_score += 1.0 / (k + rank)
    for rank, hit in enumerate(dense, start=1):
        entry = merged.setdefault(hit.chunk.chunk_id, ScoredChunk(hit.chunk, StageScores()))
        entry.scores.dense_rank, entry.scores.dense_score = rank, hit.score
        entry.scores.fused_score += 1.0 / (k + rank)
    # Ties (same fused score) keep a deterministic order: best single-list rank, then id.
    fused = sorted(
        merged.values(),
        key=lambda sc: (
            -sc.scores.fused_score,
            min(r for r in (sc.scores.bm25_rank, sc.scores.dense_rank) if r),
            sc.chunk.chunk_id,
        ),
    )
    for rank, sc in enumerate(fused, start=1):
        sc.scores.fused_rank = rank
    return fused
