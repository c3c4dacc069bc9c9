"""The contract every reranker meets (maxsim, cross-encoder in-process or on Triton, passthrough)."""

from typing import Protocol

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

    def run(self, query: str, candidates: list[ScoredChunk], top_n: int) -> list[ScoredChunk]:
        """The best `top_n` of the candidates, best first, each with its rerank score set (the candidates
        arrive in the first stage's fused order)."""
        ...
