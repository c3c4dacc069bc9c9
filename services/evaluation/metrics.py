"""Ranking metrics over one query. `ranks` maps each gold item to the 1-based rank where it was first
retrieved (absent = never retrieved); `gains` gives graded relevance (1 when binary)."""

import math

import numpy as np


def recall_at(ranks: dict[str, int], gold: list[str], k: int) -> float:
    return sum(1 for g in gold if ranks.get(g, 10**9) <= k) / len(gold) if gold else 0.0


def hit_at(ranks: dict[str, int], gold: list[str], k: int) -> float:
    return 1.0 if any(ranks.get(g, 10**9) <= k for g in gold) else 0.0


def mrr_at(ranks: dict[str, int], gold: list[str], k: int) -> float:
    best = min((ranks[g] for g in gold if g in ranks), default=None)
    return 1.0 / best if best is not None and best <= k else 0.0


def ndcg_at(ranks: dict[str, int], gains: dict[str, float], k: int) -> float:
    """Gold items found at the same rank (one chunk holding two gold spans) take consecutive slots, the higher
    gain first, as a reader meets them; counting each at the shared rank scored a perfect list above 1."""
    dcg, slot = 0.0, 0
    found = sorted(((r, gains[g]) for g, r in ranks.items() if g in gains), key=lambda rg: (rg[0], -rg[1]))
    for rank, gain in found:
        slot = max(rank, slot + 1)
        if slot > k:
            break
        dcg += gain / math.log2(slot + 1)
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def precision_at(relevant_positions: list[bool], k: int) -> float:
    return sum(relevant_positions[:k]) / k


def evidence_completeness(
    gold_spans: int, answered: bool, answer_correct: bool | None, gold_cited: float | None
) -> float | None:
    """Of a right answer to a question with several gold spans (one per part or section asked about), the share
    of those spans it cites: an answer to half a question is right, not complete. None where it does not apply."""
    return gold_cited if gold_spans > 1 and answered and answer_correct else None


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else 0.0


def paired_bootstrap(a: list[float], b: list[float], samples: int = 2000, seed: int = 13) -> tuple[float, float, float]:
    """Mean of b - a with a 95% interval from resampling queries (paired, so per-query noise cancels)."""
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if diff.size == 0:
        return 0.0, 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, diff.size, size=(samples, diff.size))].mean(axis=1)
    return float(diff.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))
