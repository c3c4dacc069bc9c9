"""The contract every reranker meets (maxsim, cross-encoder in-process or on Triton, passthrough)."""

from typing import Protocol

import numpy as np

from shared.model import ScoredChunk


class Reranker(Protocol):
    @property
    def model_id(self) -> str:
        """The scorer that produced the rerank scores (the response names it; never a model that did not run)."""
        ...

    @property
    def model_version(self) -> str: ...

    def warm_up(self) -> None:
        """Load models and open connections before the server takes requests."""
        ...

    @property
    def query_model_id(self) -> str:
        """The embedding model whose query vector `run` can use (the retriever sends the one its dense search
        used); empty when this reranker embeds no query."""
        ...

    @property
    def candidates_read(self) -> int:
        """How many of the leading candidates `run` reads beyond their ids and scores; the rest keep their order."""
        ...

    @property
    def view_vectors_read(self) -> int:
        """How many of the leading candidates' stored view vectors `run` reads (0: none); the caller need send
        no more."""
        ...

    def run(
        self, query: str, candidates: list[ScoredChunk], top_n: int, query_vector: np.ndarray | None = None
    ) -> list[ScoredChunk]:
        """The best `top_n` of the candidates, best first, each with its rerank score set (the candidates
        arrive in the first stage's fused order). `query_vector`: the query embedded with `query_model_id`'s
        model, when the caller has it (the reranker then does not embed the query again)."""
        ...
