"""The contract every index backend meets (embedded SQLite, OpenSearch); tests/conformance runs one suite
against each."""

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol, TypeAlias

import numpy as np

from shared.errors import Aborted
from shared.model import Chunk, DocumentMeta, SearchFilters


class SearchHit:
    """One ranked chunk and its score. A backend may hand the chunk over as a loader instead (`deferred`): the
    embedded index's rows cost more to turn into chunks (JSON columns, view vectors) than to rank, and fusion keeps
    only the top k of two overlapping lists, so only the hits a caller reads `chunk` of are built."""

    __slots__ = ("chunk_id", "score", "_chunk", "_load")

    def __init__(self, chunk: Chunk, score: float):
        self.chunk_id, self.score = chunk.chunk_id, score
        self._chunk: Chunk | None = chunk
        self._load: Callable[[], Chunk] | None = None

    @classmethod
    def deferred(cls, chunk_id: str, score: float, load: Callable[[], Chunk]) -> "SearchHit":
        hit = cls.__new__(cls)
        hit.chunk_id, hit.score, hit._chunk, hit._load = chunk_id, score, None, load
        return hit

    @property
    def chunk(self) -> Chunk:
        if self._chunk is None:
            assert self._load is not None
            self._chunk, self._load = self._load(), None
        return self._chunk

    def __repr__(self) -> str:
        return f"SearchHit(chunk_id={self.chunk_id!r}, score={self.score!r})"


@dataclasses.dataclass
class UpsertResult:
    written: int
    unchanged: int
    removed: int
    # The document version was already indexed before this write.
    replaced_existing: bool = False


# One stored document version with its vectors: what export yields and bulk_add takes, so an index
# moves to another backend without re-embedding.
DocumentVersion: TypeAlias = tuple[DocumentMeta, list[Chunk], dict[str, np.ndarray]]


def new_chunk_vector(vectors: dict[str, np.ndarray], chunk: Chunk, meta: DocumentMeta) -> np.ndarray:
    """The embedding of a chunk the write must insert. The caller embedded only the chunks not stored when it
    looked (existing_chunk_ids); one that is missing was stored then and has been removed since, by a concurrent
    write or delete of the document, so this write is refused whole instead of failing on a KeyError."""
    vector = vectors.get(chunk.chunk_id)
    if vector is None:
        raise Aborted(
            f"{meta.document_id}@{meta.version}: chunk {chunk.chunk_id} was stored when this write began and "
            "was removed by a concurrent write or delete of the document; nothing was written: send it again"
        )
    return np.asarray(vector, dtype=np.float32)


class IndexBackend(Protocol):
    name: str

    def warm_up(self) -> None:
        """Create what the backend needs (file and schema, index and mapping); safe to call again and
        from several processes at once."""

    def refresh(self) -> None:
        """Make every write so far visible to searches (a no-op where a commit already does)."""

    def existing_chunk_ids(self, meta: DocumentMeta, model_id: str) -> set[str]:
        """Chunk ids already stored for (tenant, document, version) under this embedding model."""

    def replace_document_version(
        self, meta: DocumentMeta, chunks: list[Chunk], vectors: dict[str, np.ndarray], model_id: str
    ) -> UpsertResult:
        """Make the stored chunks of (tenant, document, version) exactly `chunks`, atomically.
        `vectors` holds embeddings for the chunks that were not already stored."""

    def delete_document(self, tenant_id: str, document_id: str) -> int: ...

    def document_scopes(self, tenant_id: str, document_id: str) -> set[str]:
        """Every access scope any stored version of the document is filed under (empty: not stored)."""

    def bm25(self, tenant_id: str, query: str, filters: SearchFilters, top_k: int) -> list[SearchHit]: ...

    def knn(
        self, tenant_id: str, vector: np.ndarray, model_id: str, filters: SearchFilters, top_k: int
    ) -> list[SearchHit]: ...

    def get_chunk(self, tenant_id: str, chunk_id: str, access_scopes: list[str]) -> Chunk | None: ...

    def stats(self, tenant_id: str) -> dict: ...

    def count_chunks(self) -> int:
        """All chunks, every tenant (the index-size gauge)."""

    def export(self, tenant_id: str) -> Iterator[DocumentVersion]:
        """Every stored document version of the tenant, with its chunks in document order and their
        vectors by chunk id (streamed: a tenant need not fit in memory)."""

    def bulk_add(self, documents: Iterable[DocumentVersion], model_id: str) -> int:
        """Store each document version as replace_document_version would, without per-document
        refreshes (a bulk load); returns the chunks stored. Call refresh() afterwards."""
