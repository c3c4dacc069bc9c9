"""The indexer component: embeds new chunks and writes a document version through the index backend."""

import contextlib
import logging
import threading
from collections.abc import Callable

import numpy as np

from shared.embedding.base import Embedder
from shared.embedding.views import attach_views
from shared.errors import DeadlineExceeded, InvalidArgument, PermissionDenied, require
from shared.index.base import IndexBackend, UpsertResult
from shared.index.erasure import IndexErasure, erase
from shared.index.supersede import close_document, settle_versions
from shared.model import PUBLIC_SCOPE, Chunk, DocumentMeta
from shared.names import ALL_SCOPES

log = logging.getLogger("ragmesh.indexer")

# New chunks embedded between two checks that the caller still waits: a large document whose caller gave up
# stops within one slice (seconds) instead of embedding for minutes and writing what nobody was told of.
EMBED_SLICE = 16


class DocumentLocks:
    """Writes of one document take turns; writes of different documents never wait for each other. An upsert
    embeds only the chunks not stored when it looked, so a concurrent write or delete of the same document in
    between left it without a vector for a chunk that had gone: it failed with an internal KeyError. (Across
    indexer processes the backends refuse such a write whole with ABORTED: shared/index/base.new_chunk_vector.)
    One lock per document being written, dropped when no one holds or waits for it: a fixed set of striped locks
    made a small document wait, now and then, for a large one that hashed to its stripe to finish embedding."""

    def __init__(self):
        self._guard = threading.Lock()
        self._locks: dict[tuple[str, str], tuple[threading.Lock, int]] = {}  # key -> (lock, holders and waiters)

    @contextlib.contextmanager
    def hold(self, tenant_id: str, document_id: str):
        key = (tenant_id, document_id)
        with self._guard:
            lock, users = self._locks.get(key, (None, 0))
            lock = lock or threading.Lock()
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                lock, users = self._locks[key]
                if users == 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        with self._guard:
            return len(self._locks)


class DocumentIndexer:
    def __init__(self, index: IndexBackend, embedder: Embedder, store_views: bool = True):
        self.index = index
        self.embedder = embedder
        # The maxsim reranker's view vectors (off only to measure what they cost: loadtest/bench_maxsim.py).
        self.store_views = store_views
        self._locks = DocumentLocks()

    def warm_up(self) -> None:
        self.index.warm_up()
        self.embedder.warm_up()

    @property
    def model_id(self) -> str:
        return self.embedder.spec.model_id

    def upsert(
        self,
        meta: DocumentMeta,
        chunks: list[Chunk],
        held_scopes: list[str] | None = None,
        caller_waits: Callable[[], bool] = lambda: True,
    ) -> UpsertResult:
        """Writes the version, embedding only chunks not stored yet. `caller_waits` (the gRPC context's
        is_active) is asked between embedding slices and before the write: once it says no, the upsert stops
        with DEADLINE_EXCEEDED and writes nothing, so a caller told of a failure never finds the document."""
        require(meta.tenant_id, "meta.tenant_id")
        require(meta.document_id, "meta.document_id")
        require(meta.version, "meta.version")
        with self._locks.hold(meta.tenant_id, meta.document_id):
            return self._upsert(meta, chunks, held_scopes, caller_waits)

    def _upsert(
        self, meta: DocumentMeta, chunks: list[Chunk], held_scopes: list[str] | None, caller_waits: Callable[[], bool]
    ) -> UpsertResult:
        self._check_scopes(meta.tenant_id, meta.document_id, held_scopes, "replace")
        window = self.embedder.spec.max_tokens
        for chunk in chunks:
            require(chunk.chunk_id, f"chunks[{chunk.position}].chunk_id")
            if chunk.token_count > window:
                # Refuse rather than let the embedder silently truncate the chunk.
                raise InvalidArgument(
                    f"chunks[{chunk.position}].token_count",
                    f"{meta.document_id}: chunk {chunk.chunk_id} has {chunk.token_count} tokens, "
                    f"over the {self.model_id} window of {window}",
                )
        existing = self.index.existing_chunk_ids(meta, self.model_id)
        fresh = [c for c in chunks if c.chunk_id not in existing]
        vectors: dict[str, np.ndarray] = {}
        for start in range(0, len(fresh), EMBED_SLICE):
            self._check_waiting(caller_waits, meta, start, len(fresh))
            part = fresh[start : start + EMBED_SLICE]
            embedded = self.embedder.embed_passages([c.embed_text for c in part])
            vectors.update(zip([c.chunk_id for c in part], embedded, strict=True))
            # The maxsim reranker's view vectors, stored with the chunk in the same write (unchanged chunks keep
            # theirs).
            if self.store_views:
                attach_views(self.embedder, part)
        self._check_waiting(caller_waits, meta, len(fresh), len(fresh))
        result = self.index.replace_document_version(meta, chunks, vectors, self.model_id)
        result.replaced_existing = bool(existing)
        # A new version makes the one before it history, so an answer never cites the text it replaced.
        ended = settle_versions(self.index, meta.tenant_id, meta.document_id, meta.version)
        if ended:
            log.info(
                "%s@%s: %d chunks of earlier versions ended where a later one begins",
                meta.document_id,
                meta.version,
                ended,
            )
        return result

    @staticmethod
    def _check_waiting(caller_waits: Callable[[], bool], meta: DocumentMeta, embedded: int, fresh: int) -> None:
        if not caller_waits():
            raise DeadlineExceeded(
                f"{meta.document_id}: the caller stopped waiting (deadline passed or call cancelled) after "
                f"{embedded} of {fresh} new chunks were embedded; nothing of this version was written"
            )

    def delete(self, tenant_id: str, document_id: str, held_scopes: list[str] | None = None) -> int:
        require(tenant_id, "tenant_id")
        require(document_id, "document_id")
        with self._locks.hold(tenant_id, document_id):
            self._check_scopes(tenant_id, document_id, held_scopes, "delete")
            return self.index.delete_document(tenant_id, document_id)

    def erase(self, tenant_id: str, document_id: str | None, held_scopes: list[str] | None = None) -> IndexErasure:
        """A document (every version) or, with `document_id` None, the whole tenant, out of every index
        generation, verified (shared/index/erasure.py). Erasing what is not stored is a verified no-op."""
        require(tenant_id, "tenant_id")
        if document_id is None:
            if held_scopes is not None and ALL_SCOPES not in held_scopes:
                raise PermissionDenied(
                    f"erasing all of tenant {tenant_id!r} needs a key holding every access scope ('{ALL_SCOPES}')"
                )
            return erase(self.index, tenant_id, None)
        with self._locks.hold(tenant_id, document_id):
            self._check_scopes(tenant_id, document_id, held_scopes, "erase")
            return erase(self.index, tenant_id, document_id)

    def supersede(self, tenant_id: str, document_id: str, effective_to: str, held_scopes: list[str] | None) -> int:
        """Ends a document's versions in force at `effective_to` (another document replaces it)."""
        require(tenant_id, "tenant_id")
        require(document_id, "document_id")
        require(effective_to, "effective_to")
        with self._locks.hold(tenant_id, document_id):
            self._check_scopes(tenant_id, document_id, held_scopes, "supersede")
            return close_document(self.index, tenant_id, document_id, effective_to)

    def _check_scopes(self, tenant_id: str, document_id: str, held: list[str] | None, action: str) -> None:
        """A guarded caller may replace or delete a document only when it holds every scope the
        document is stored under: a writer cannot remove or overwrite what it may not read."""
        if held is None or ALL_SCOPES in held:
            return
        unheld = sorted(self.index.document_scopes(tenant_id, document_id) - {PUBLIC_SCOPE, *held})
        if unheld:
            raise PermissionDenied(
                f"cannot {action} {document_id!r}: it is stored under access scope(s) "
                f"{', '.join(map(repr, unheld))}, which the caller does not hold"
            )
