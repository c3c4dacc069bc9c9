"""How much the reranker is trusted against the first stage.

The final order is a weighted reciprocal rank fusion of the first-stage (fused) rank and the
cross-encoder's rank: 1/(k + first) + w/(k + rerank), plus w_j/(k + rank_j) for any further signal
(maxsim). w = 0 keeps the fused order; a very large w is the cross-encoder alone. w is chosen on a
tuning split (never the split that is reported) and stored with the model, so a model can only move
results where it was shown to help.
"""

import numpy as np

from shared.model import ScoredChunk

RRF_K = 60
# Large enough that the reranker's rank decides and the first stage only breaks its ties.
RERANKER_ONLY = 1e6
WEIGHT_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, RERANKER_ONLY)


def ranks_of(scores: np.ndarray, first_ranks: list[int]) -> list[int]:
    """1-based rank of each item by descending score, ties broken by the first-stage rank."""
    order = sorted(range(len(scores)), key=lambda i: (-float(scores[i]), first_ranks[i]))
    ranks = [0] * len(scores)
    for rank, i in enumerate(order, start=1):
        ranks[i] = rank
    return ranks


def fused_order(
    first_ranks: list[int],
    scores: np.ndarray,
    weight: float,
    k: int = RRF_K,
    more: tuple[tuple[np.ndarray, float], ...] = (),
) -> list[int]:
    """Indices in final order; `more` holds further (scores, weight) signals."""
    value = [1.0 / (k + f) for f in first_ranks]
    for signal, w in ((scores, weight), *more):
        for i, r in enumerate(ranks_of(signal, first_ranks)):
            value[i] += w / (k + r)
    return sorted(range(len(first_ranks)), key=lambda i: (-value[i], first_ranks[i]))


def reorder(
    head: list[ScoredChunk],
    tail: list[ScoredChunk],
    scores: np.ndarray,
    weight: float,
    k: int = RRF_K,
    more: tuple[tuple[np.ndarray, float], ...] = (),
) -> list[ScoredChunk]:
    """The rescored head in fused order, then the untouched tail; every candidate gets its rerank_rank."""
    first = [sc.scores.fused_rank or i for i, sc in enumerate(head, start=1)]
    ranked = [head[i] for i in fused_order(first, scores, weight, k, more)] + tail
    for rank, sc in enumerate(ranked, start=1):
        sc.scores.rerank_rank = rank
    return ranked
