"""The retriever component: BM25 and dense search in parallel over one filtered view, fused by RRF."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from services.retriever.fusion import reciprocal_rank_fusion
from shared.embedding.base import Embedder
from shared.errors import InvalidArgument, NotFound, require
from shared.index.base import IndexBackend
from shared.model import RETRIEVAL_MODES, Chunk, ScoredChunk, SearchFilters

MAX_QUERY_CHARS = 20_000


class HybridRetriever:
    def __init__(
        self,
        index: IndexBackend,
        embedder: Embedder,
        rrf_k: int = 60,
        per_retriever_k: int = 50,
        default_top_k: int = 50,
    ):
        self.index = index
        self.embedder = embedder
        self.rrf_k = rrf_k
        self.per_retriever_k = per_retriever_k
        self.default_top_k = default_top_k
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="retrieve")

    def warm_up(self) -> None:
        self.index.warm_up()
        if hasattr(self.index, "warm_vectors"):  # the embedded index: build its k-NN views in the background
            self.index.warm_vectors()
        self.embedder.warm_up()

    @property
    def model_id(self) -> str:
        """The model of the rows it searches."""
        return self.embedder.spec.model_id

    @property
    def query_encoder(self) -> str:
        """What its query vectors are (ModelSpec.query_encoder): the model, and the export that embeds questions."""
        return self.embedder.spec.query_encoder

    def _dense(self, tenant_id, query, filters, k):
        vector = self.embedder.embed_queries([query])[0]
        return self.index.knn(tenant_id, vector, self.model_id, filters, k), vector

    def run(
        self, tenant_id: str, query: str, filters: SearchFilters, mode: str = "hybrid", top_k: int = 0
    ) -> list[ScoredChunk]:
        return self.search(tenant_id, query, filters, mode, top_k)[0]

    def search(
        self, tenant_id: str, query: str, filters: SearchFilters, mode: str = "hybrid", top_k: int = 0
    ) -> tuple[list[ScoredChunk], np.ndarray | None]:
        """The fused candidates and the query vector the dense search used (None in BM25 mode): the reranker
        can score with it instead of embedding the query again."""
        require(tenant_id, "tenant_id")
        if not query.strip():
            raise InvalidArgument("query", "is empty")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidArgument("query", f"is {len(query)} characters, over the {MAX_QUERY_CHARS} limit")
        if mode not in RETRIEVAL_MODES:
            raise InvalidArgument("mode", f"{mode!r} is not one of {RETRIEVAL_MODES}")
        if top_k < 0:
            raise InvalidArgument("top_k", "must not be negative")
        k = max(self.per_retriever_k, top_k)
        # Both searches start at once; the dense side spends most of its time encoding the query.
        bm25 = self._pool.submit(self.index.bm25, tenant_id, query, filters, k) if mode != "dense" else None
        dense = self._pool.submit(self._dense, tenant_id, query, filters, k) if mode != "bm25" else None
        dense_hits, vector = dense.result() if dense else ([], None)
        fused = reciprocal_rank_fusion(
            bm25.result() if bm25 else [], dense_hits, self.rrf_k, top_k or self.default_top_k
        )
        return fused, vector

    def get_chunk(self, tenant_id: str, chunk_id: str, access_scopes: list[str]) -> Chunk:
        require(tenant_id, "tenant_id")
        require(chunk_id, "chunk_id")
        chunk = self.index.get_chunk(tenant_id, chunk_id, access_scopes)
        if chunk is None:
            raise NotFound(f"chunk {chunk_id!r} not found for tenant {tenant_id!r} (or not visible to its scopes)")
        return chunk
