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

import logging
import threading

import numpy as np

from services.reranker import fusion
from services.reranker.bounded_cache import BoundedCache
from shared.embedding import views as view_vectors
from shared.embedding.base import Embedder
from shared.errors import InvalidArgument
from shared.model import ScoredChunk
from shared.observability.metrics import RERANK_QUERY_SOURCES, RERANK_VIEW_SOURCES
from shared.text import identifiers, names_another_record, record_numbers

log = logging.getLogger("ragmesh.reranker")

# Large enough to lift an exact identifier match over any plain similarity difference; a section
# whose heading names the identifier (the definition) beats a passage that merely mentions it.
IDENTIFIER_IN_HEADING_BONUS = 0.3
IDENTIFIER_IN_BODY_BONUS = 0.15
# A question naming one record ("ticket 10611 outcome") is not answered by another record's document: the other
# tickets' record headers ("Ticket #10231 / Status: Solved / Plan: Team") share its words and pushed the asked
# ticket's messages, which name it only by their title, out of the context.
OTHER_RECORD_PENALTY = 0.3


def _per_unit_max(similarity: np.ndarray, units: np.ndarray) -> list[float]:
    n = int(units.max()) + 1 if len(units) else 0
    best = np.full(n, -np.inf, dtype=np.float32)
    np.maximum.at(best, units[units >= 0], similarity[units >= 0])
    return [float(v) if np.isfinite(v) else float("nan") for v in best]


class PassthroughReranker:
    model_id = "passthrough"
    model_version = "fused-order"
    query_model_id = ""  # scores nothing, embeds nothing
    view_vectors_read = 0
    candidates_read = 0

    def warm_up(self) -> None:
        pass

    def run(
        self, query: str, candidates: list[ScoredChunk], top_n: int, query_vector: np.ndarray | None = None
    ) -> list[ScoredChunk]:
        ranked = candidates[:top_n]
        for rank, sc in enumerate(ranked, start=1):
            sc.scores.rerank_rank, sc.scores.rerank_score = rank, sc.scores.fused_score
        return ranked


class MaxSimReranker:
    model_version = "1"

    def __init__(
        self,
        embedder: Embedder,
        rescore_k: int = 20,
        cache_chunks: int = 50_000,
        fusion_weight: float = 1.0,
        query_embedder: Embedder | None = None,
    ):
        self.embedder = embedder  # the passages' model: the units of a chunk stored without view vectors
        # Questions may be embedded by another export of that model (registry.build_query_embedder); its scores
        # are its own, so it is part of this reranker's id (a calibrated threshold holds for one of them).
        self.query_embedder = query_embedder or embedder
        self.rescore_k = rescore_k
        self.fusion_weight = fusion_weight
        # Chunk ids are derived from content, so a chunk's unit vectors never go stale.
        self._cache: BoundedCache[tuple[np.ndarray, np.ndarray]] = BoundedCache(cache_chunks)
        # Per chunk: the identifiers its heading names and those of heading and body (stemming the body for
        # every rescored candidate of every query that names one was a fifth of this stage's CPU under load).
        self._identifiers: BoundedCache[tuple[set[str], set[str]]] = BoundedCache(cache_chunks)
        self._lock = threading.Lock()  # over both caches

    @property
    def model_id(self) -> str:
        fused = f"+rrf{self.fusion_weight:g}" if self.fusion_weight >= 0 else ""
        return f"maxsim-views-idmatch{fused}/{self.query_embedder.spec.query_encoder}"

    @property
    def query_model_id(self) -> str:
        return self.query_embedder.spec.query_encoder

    @property
    def view_vectors_read(self) -> int:
        return self.rescore_k  # the head it rescores; the tail keeps the first stage's order

    @property
    def candidates_read(self) -> int:
        return self.rescore_k

    def warm_up(self) -> None:
        self.embedder.warm_up()
        self.query_embedder.warm_up()

    def _stored(self, sc: ScoredChunk) -> tuple[np.ndarray, np.ndarray] | None:
        """The view vectors the index stored with the chunk, when this reranker's model made them."""
        views = sc.chunk.views
        if views is None or views.model_id != self.embedder.spec.model_id:
            return None
        try:
            return view_vectors.unpack(views)
        except ValueError as exc:  # a damaged entry costs an embedding, never the request
            log.warning("chunk %s: stored view vectors unusable (%s); embedding its views", sc.chunk.chunk_id, exc)
            return None

    def _unit_vectors(self, candidates: list[ScoredChunk]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per candidate: its view vectors and, per view, the answer unit it reads (-1: the title). Stored
        vectors first (the index keeps them with the chunk); the cache or an embedding only for chunks
        stored without them (rows older than view storage, or another model's)."""
        found: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for sc in candidates:
            stored = self._stored(sc)
            if stored is not None:
                found[sc.chunk.chunk_id] = stored
        stored_count = len(found)
        with self._lock:
            for sc in candidates:
                cached = None if sc.chunk.chunk_id in found else self._cache.get(sc.chunk.chunk_id)
                if cached is not None:
                    found[sc.chunk.chunk_id] = cached
        missing = list({sc.chunk.chunk_id: sc for sc in candidates if sc.chunk.chunk_id not in found}.values())
        RERANK_VIEW_SOURCES.labels("stored").inc(stored_count)
        RERANK_VIEW_SOURCES.labels("cache").inc(len(found) - stored_count)
        RERANK_VIEW_SOURCES.labels("embedded").inc(len(missing))
        if missing:
            embedded = view_vectors.embed_views(self.embedder, [sc.chunk for sc in missing])
            with self._lock:
                for sc, entry in zip(missing, embedded, strict=True):
                    found[sc.chunk.chunk_id] = entry
                    self._cache.put(sc.chunk.chunk_id, entry)
        return [found[sc.chunk.chunk_id] for sc in candidates]

    def _chunk_identifiers(self, chunk) -> tuple[set[str], set[str]]:
        """(identifiers of the heading path, of heading path and body), cached by chunk id (derived from content)."""
        with self._lock:
            found = self._identifiers.get(chunk.chunk_id)
        if found is None:
            heading = " ".join(chunk.heading_path)
            found = (identifiers(heading), identifiers(heading + " " + chunk.body))
            with self._lock:
                self._identifiers.put(chunk.chunk_id, found)
        return found

    def forget(self, chunk_ids: list[str]) -> tuple[int, int, int, int]:
        """Erasure: drops what is cached of these chunks (view vectors, identifiers). (chunks removed, chunks
        still cached, entries before, after)"""
        with self._lock:
            before = len(self._cache) + len(self._identifiers)
            removed = 0
            for cid in chunk_ids:
                dropped = [self._cache.pop(cid), self._identifiers.pop(cid)]
                removed += any(entry is not None for entry in dropped)
            remaining = sum(1 for cid in chunk_ids if cid in self._cache or cid in self._identifiers)
            return removed, remaining, before, len(self._cache) + len(self._identifiers)

    def score(self, query: str, head: list[ScoredChunk], query_vector: np.ndarray | None = None) -> np.ndarray:
        """Max-similarity of the query with each candidate's views, plus the identifier bonus. Each
        candidate's per-unit similarities (the best view of each answer unit, NaN for a unit without one)
        are left in its scores for the generator's answer selection."""
        scores = np.full(len(head), -1.0, dtype=np.float32)
        if head:
            query_vec = self.query_embedder.embed_queries([query])[0] if query_vector is None else query_vector
            RERANK_QUERY_SOURCES.labels("embedded" if query_vector is None else "given").inc()
            named = identifiers(query)
            records = record_numbers(query)
            for i, (vectors, units) in enumerate(self._unit_vectors(head)):
                if len(vectors):
                    similarity = vectors @ query_vec
                    scores[i] = float(np.max(similarity))
                    head[i].scores.unit_similarity = _per_unit_max(similarity, units)
                if named:
                    in_heading, in_chunk = self._chunk_identifiers(head[i].chunk)
                    if named <= in_heading:
                        scores[i] += IDENTIFIER_IN_HEADING_BONUS
                    elif named <= in_chunk:
                        scores[i] += IDENTIFIER_IN_BODY_BONUS
                if records and names_another_record(records, head[i].chunk.meta.title):
                    scores[i] -= OTHER_RECORD_PENALTY
        return scores

    def head_scores(
        self, query: str, candidates: list[ScoredChunk], query_vector: np.ndarray | None = None
    ) -> np.ndarray:
        """One score per candidate: the first `rescore_k` scored, the rest -inf (ranked after them)."""
        scores = np.full(len(candidates), -np.inf, dtype=np.float32)
        scores[: self.rescore_k] = self.score(query, candidates[: self.rescore_k], query_vector)
        return scores

    def run(
        self, query: str, candidates: list[ScoredChunk], top_n: int, query_vector: np.ndarray | None = None
    ) -> list[ScoredChunk]:
        """`query_vector`: the query already embedded with this reranker's model (the retriever's), if any."""
        if not query.strip():
            raise InvalidArgument("query", "is empty")
        head, tail = candidates[: self.rescore_k], candidates[self.rescore_k :]
        scores = self.score(query, head, query_vector)
        weight = self.fusion_weight if self.fusion_weight >= 0 else fusion.RERANKER_ONLY
        ranked = fusion.reorder(head, tail, scores, weight)
        for i, sc in enumerate(head):
            sc.scores.rerank_score = float(scores[i])
        return ranked[:top_n]
