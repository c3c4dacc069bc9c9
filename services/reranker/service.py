"""Rerankers. Each reports exactly which scorer produced the scores it returns.

- `MaxSimReranker`: max-similarity with the bi-encoder over short views of a candidate (its
  section title, each sentence under it, each table cell with its row key and column), plus a
  fixed bonus when the candidate holds every identifier the query names (E-4412, clause 7.2):
  embeddings blur E-4412 and E-4421, exact matching does not. A real model score, cheap enough
  for CPU; the default while no trained cross-encoder (services/reranker/cross_encoder.py) has shown
  a gain on its tuning split.
- `PassthroughReranker`: keeps the fused order and says so.

MaxSim's order is fused with the first stage's (weighted RRF, services/reranker/fusion.py) rather than
replacing it: on the SciFact tuning split (train queries outside the dev portion, hybrid top 20 rescored)
replacing scored nDCG@10 0.720 against the fused order's 0.739, fusing with weight 1.0 scored 0.753.
A negative weight restores the replace behaviour.
"""

import threading
from collections import OrderedDict

import numpy as np

from services.reranker import fusion
from shared.embedding.base import Embedder
from shared.errors import InvalidArgument
from shared.model import ScoredChunk
from shared.text import identifiers, scoring_views

MAX_VIEWS_PER_CANDIDATE = 48
# Large enough to lift an exact identifier match over any plain similarity difference; a section
# whose heading names the identifier (the definition) beats a passage that merely mentions it.
IDENTIFIER_IN_HEADING_BONUS = 0.3
IDENTIFIER_IN_BODY_BONUS = 0.15


def _per_unit_max(similarity: np.ndarray, units: np.ndarray) -> list[float]:
    n = int(units.max()) + 1 if len(units) else 0
    best = np.full(n, -np.inf, dtype=np.float32)
    np.maximum.at(best, units[units >= 0], similarity[units >= 0])
    return [float(v) if np.isfinite(v) else float("nan") for v in best]


class PassthroughReranker:
    model_id = "passthrough"
    model_version = "fused-order"

    def warm_up(self) -> None:
        pass

    def run(self, query: str, candidates: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        ranked = candidates[:top_n]
        for rank, sc in enumerate(ranked, start=1):
            sc.scores.rerank_rank, sc.scores.rerank_score = rank, sc.scores.fused_score
        return ranked


class MaxSimReranker:
    model_version = "1"

    def __init__(self, embedder: Embedder, rescore_k: int = 20, cache_chunks: int = 50_000, fusion_weight: float = 1.0):
        self.embedder = embedder
        self.rescore_k = rescore_k
        self.fusion_weight = fusion_weight
        # Chunk ids are derived from content, so a chunk's unit vectors never go stale.
        self._cache: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self._cache_size = cache_chunks
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        fused = f"+rrf{self.fusion_weight:g}" if self.fusion_weight >= 0 else ""
        return f"maxsim-views-idmatch{fused}/{self.embedder.spec.model_id}"

    def warm_up(self) -> None:
        self.embedder.warm_up()

    def _unit_vectors(self, candidates: list[ScoredChunk]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per candidate: its view vectors and, per view, the answer unit it reads (-1: the title)."""
        with self._lock:
            cached = {sc.chunk.chunk_id: self._cache.get(sc.chunk.chunk_id) for sc in candidates}
        missing = [sc for sc in candidates if cached[sc.chunk.chunk_id] is None]
        texts, owners, units = [], [], []
        for i, sc in enumerate(missing):
            # A document without headings is still under its title: "Title: sentence" keeps the context.
            headings = sc.chunk.heading_path or ([sc.chunk.meta.title] if sc.chunk.meta.title else [])
            views = scoring_views(headings, sc.chunk.body, MAX_VIEWS_PER_CANDIDATE) or [(sc.chunk.body, -1)]
            texts += [text for text, _ in views]
            units += [unit for _, unit in views]
            owners += [i] * len(views)
        if texts:
            vectors = self.embedder.embed_passages(texts)
            owners_arr, units_arr = np.array(owners), np.array(units)
            with self._lock:
                for i, sc in enumerate(missing):
                    mine = owners_arr == i
                    entry = (vectors[mine], units_arr[mine])
                    cached[sc.chunk.chunk_id] = self._cache[sc.chunk.chunk_id] = entry
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        found = {chunk_id: entry for chunk_id, entry in cached.items() if entry is not None}
        return [found[sc.chunk.chunk_id] for sc in candidates]

    def forget(self, chunk_ids: list[str]) -> tuple[int, int, int, int]:
        """Erasure: drops the cached view vectors of these chunks. (removed, still cached, size before, after)"""
        with self._lock:
            before = len(self._cache)
            removed = sum(1 for cid in chunk_ids if self._cache.pop(cid, None) is not None)
            remaining = sum(1 for cid in chunk_ids if cid in self._cache)
            return removed, remaining, before, len(self._cache)

    def score(self, query: str, head: list[ScoredChunk]) -> np.ndarray:
        """Max-similarity of the query with each candidate's views, plus the identifier bonus. Each
        candidate's per-unit similarities (the best view of each answer unit, NaN for a unit without one)
        are left in its scores for the generator's answer selection."""
        scores = np.full(len(head), -1.0, dtype=np.float32)
        if head:
            query_vec = self.embedder.embed_queries([query])[0]
            named = identifiers(query)
            for i, (vectors, units) in enumerate(self._unit_vectors(head)):
                if len(vectors):
                    similarity = vectors @ query_vec
                    scores[i] = float(np.max(similarity))
                    head[i].scores.unit_similarity = _per_unit_max(similarity, units)
                chunk = head[i].chunk
                if named and named <= identifiers(" ".join(chunk.heading_path)):
                    scores[i] += IDENTIFIER_IN_HEADING_BONUS
                elif named and named <= identifiers(" ".join(chunk.heading_path) + " " + chunk.body):
                    scores[i] += IDENTIFIER_IN_BODY_BONUS
        return scores

    def head_scores(self, query: str, candidates: list[ScoredChunk]) -> np.ndarray:
        """One score per candidate: the first `rescore_k` scored, the rest -inf (ranked after them)."""
        scores = np.full(len(candidates), -np.inf, dtype=np.float32)
        scores[: self.rescore_k] = self.score(query, candidates[: self.rescore_k])
        return scores

    def run(self, query: str, candidates: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        if not query.strip():
            raise InvalidArgument("query", "is empty")
        head, tail = candidates[: self.rescore_k], candidates[self.rescore_k :]
        scores = self.score(query, head)
        weight = self.fusion_weight if self.fusion_weight >= 0 else fusion.RERANKER_ONLY
        ranked = fusion.reorder(head, tail, scores, weight)
        for i, sc in enumerate(head):
            sc.scores.rerank_score = float(scores[i])
        return ranked[:top_n]
