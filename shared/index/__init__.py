"""Index backends. The indexer writes through one; the retriever reads through it."""

from shared.index.base import IndexBackend, SearchHit, UpsertResult
from shared.index.embedded import EmbeddedIndex

__all__ = ["EmbeddedIndex", "IndexBackend", "SearchHit", "UpsertResult"]
