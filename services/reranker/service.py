"""Rerankers. Each reports exactly which scorer produced the scores it returns.

- `MaxSimReranker`: sentence-level max-similarity with the bi-encoder (query vs. each sentence or
  table row of a candidate, under its heading path). A real model score, cheap enough for CPU, used
  until a cross-encoder is trained and served.
- `PassthroughReranker`: keeps the fused order and says so.
"""

import numpy as np

from shared.embedding.base import Embedder
from shared.errors import InvalidArgument
from shared.model import ScoredChunk
from shared.text import answer_units, heading_prefix

MAX_UNITS_PER_CANDIDATE = 12


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

    def __init__(self, embedder: Embedder, rescore_k: int = 20):
        self.embedder = embedder
        self.rescore_k = rescore_k

    @property
    def model_id(self) -> str:
        return f"maxsim/{self.embedder.spec.model_id}"

    def warm_up(self) -> None:
        self.embedder.warm_up()

    def run(self, query: str, candidates: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        if not query.strip():
            raise InvalidArgument("query", "is empty")
        head, tail = candidates[: self.rescore_k], candidates[self.rescore_k:]
        texts, owners = [], []
        for i, sc in enumerate(head):
            prefix = heading_prefix(sc.chunk.meta.title, sc.chunk.heading_path)
            spans = answer_units(sc.chunk.body)[:MAX_UNITS_PER_CANDIDATE] or [(0, len(sc.chunk.body))]
            for start, end in spans:
                texts.append(f"{prefix}: {sc.chunk.body[start:end]}" if prefix else sc.chunk.body[start:end])
                owners.append(i)
        scores = np.full(len(head), -1.0, dtype=np.float32)
        if texts:
            query_vec = self.embedder.embed_queries([query])[0]
            sims = self.embedder.embed_passages(texts) @ query_vec
            np.maximum.at(scores, np.array(owners), sims)
        order = sorted(range(len(head)), key=lambda i: (-scores[i], head[i].scores.fused_rank))
        ranked = [head[i] for i in order] + tail
        for rank, sc in enumerate(ranked, start=1):
            sc.scores.rerank_rank = rank
        for i, sc in enumerate(head):
            sc.scores.rerank_score = float(scores[i])
        return ranked[:top_n]
