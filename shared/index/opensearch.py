"""The OpenSearch index: BM25 on an `english`-analysed text field plus Lucene HNSW k-NN, one index for
every tenant (tenant, scopes and dates are filters inside each query, never applied afterwards).

The semantics are the embedded backend's (see base.py and the conformance suite). Differences that
follow from the engine: a write becomes searchable through an explicit refresh, and a replacement is
not one transaction: new and updated chunks are written before stale ones are deleted, so a reader
may briefly see both versions of a chunk, never neither.
"""

import base64
import dataclasses
import functools
from collections.abc import Iterable, Iterator

import numpy as np
from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import ConnectionError as EngineConnectionError
from opensearchpy.exceptions import RequestError, TransportError

from shared.config import MeshSettings
from shared.errors import FailedPrecondition, Unavailable
from shared.index.base import DocumentVersion, SearchHit, UpsertResult, new_chunk_vector
from shared.index.lexical import search_phrases
from shared.model import (
    PUBLIC_SCOPE,
    Chunk,
    DocumentMeta,
    SearchFilters,
    ViewVectors,
    normalize_time,
    utc_now,
    visible_scopes,
)

# "No end date" is stored as a far-future date so the current-only filter is two plain ranges.
OPEN_END = "9999-12-31T23:59:59Z"
_PAGE = 5000
# What a hit needs to become a Chunk; the vector stays on the server.
_SOURCE_EXCLUDES = ["embedding"]


@dataclasses.dataclass(frozen=True)
class HnswParams:
    """Lucene HNSW settings: m and ef_construction shape the graph when the index is created; ef_search is per
    query, the mesh's RAGMESH_OPENSEARCH_EF_SEARCH (its default and how it was chosen: shared/config.py)."""

    m: int = 16
    ef_construction: int = 100
    ef_search: int = MeshSettings.model_fields["opensearch_ef_search"].default


def _keyword(indexed: bool = True) -> dict:
    return {"type": "keyword"} if indexed else {"type": "keyword", "index": False, "doc_values": False}


# Searched and filtered fields are mapped; what only rebuilds a Chunk sits in `payload`, kept in
# _source but not indexed.
_MAPPINGS = {
    "dynamic": "strict",
    "properties": {
        **{
            f: _keyword()
            for f in (
                "chunk_id",
                "tenant_id",
                "document_id",
                "version",
                "access_scopes",
                "content_type",
                "embedding_model_id",
            )
        },
        **{f: _keyword(indexed=False) for f in ("source_uri", "title", "source_sha256")},
        "effective_from": {"type": "date"},
        "effective_to": {"type": "date"},
        "indexed_at": {"type": "date"},
        "search_text": {"type": "text", "analyzer": "english"},
        "payload": {"type": "object", "enabled": False},
    },
}


def _engine_errors(method):
    """Connection failures become Unavailable (retryable) naming the engine, for the gRPC status."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except EngineConnectionError as exc:
            raise Unavailable(f"OpenSearch at {self.url} is unreachable: {exc.info or exc}") from exc

    return wrapper


class OpenSearchIndex:
    name = "opensearch"

    def __init__(
        self,
        url: str,
        index: str,
        dimension: int | None = None,
        hnsw: HnswParams = HnswParams(),
        refresh: bool = True,
        client: OpenSearch | None = None,
        shards: int = 1,
        replicas: int = 0,
    ):
        self.url = url
        self.index = index
        self.hnsw = hnsw
        # Bulk loads turn this off and call refresh() once at the end.
        self.refresh_on_write = refresh
        # Applied when this process creates the index (a cluster sets them from RAGMESH_OPENSEARCH_SHARDS/_REPLICAS).
        self.shards, self.replicas = shards, replicas
        self._wanted_dimension = dimension
        self._mapped_dimension: int | None = None  # learnt from the mapping, then cached
        self.client = client or OpenSearch(hosts=[url], timeout=30, max_retries=2, retry_on_timeout=True)

    # ---- index lifecycle --------------------------------------------------------------------

    @_engine_errors
    def warm_up(self) -> None:
        if not self.client.indices.exists(index=self.index):
            body = {
                "settings": {
                    "index": {"number_of_shards": self.shards, "number_of_replicas": self.replicas, "knn": True}
                },
                "mappings": _MAPPINGS,
            }
            try:
                self.client.indices.create(index=self.index, body=body)
            except RequestError as exc:
                if exc.error != "resource_already_exists_exception":  # another process won the race
                    raise
        if self._wanted_dimension is not None:
            self._ensure_vector_field(self._wanted_dimension)

    @_engine_errors
    def refresh(self) -> None:
        self.client.indices.refresh(index=self.index)

    @_engine_errors
    def drop(self) -> None:
        self.client.indices.delete(index=self.index, ignore_unavailable=True)

    def _vector_dimension(self) -> int | None:
        """The mapped dimension; the vector field is added with the first write (or warm_up when the
        dimension was given), since index.knn must be set at creation but the field need not be."""
        if self._mapped_dimension is None:
            mapping = self.client.indices.get_mapping(index=self.index)[self.index]["mappings"]
            field = mapping.get("properties", {}).get("embedding")
            self._mapped_dimension = field["dimension"] if field else None
        return self._mapped_dimension

    def _ensure_vector_field(self, dimension: int) -> None:
        mapped = self._vector_dimension()
        if mapped is None:
            method = {
                "name": "hnsw",
                "engine": "lucene",
                "space_type": "cosinesimil",
                "parameters": {"m": self.hnsw.m, "ef_construction": self.hnsw.ef_construction},
            }
            self.client.indices.put_mapping(
                index=self.index,
                body={"properties": {"embedding": {"type": "knn_vector", "dimension": dimension, "method": method}}},
            )
            self._mapped_dimension = dimension
        elif mapped != dimension:
            raise FailedPrecondition(
                f"embedding model mismatch: index {self.index!r} holds {mapped}-d vectors, these are "
                f"{dimension}-d; re-embed into a new index or switch models"
            )

    # ---- writes (indexer) -------------------------------------------------------------------

    def _scan(self, query: dict, fields: list[str]) -> list[dict]:
        """Every matching document's `fields`, paged with search_after (no result-window limit)."""
        sources, after = [], None
        while True:
            body = {"size": _PAGE, "query": query, "sort": [{"chunk_id": "asc"}], "_source": fields}
            if after:
                body["search_after"] = after
            hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
            sources += [h["_source"] for h in hits]
            if len(hits) < _PAGE:
                return sources
            after = hits[-1]["sort"]

    @staticmethod
    def _version_query(meta: DocumentMeta) -> dict:
        return {
            "bool": {
                "filter": [
                    {"term": {"tenant_id": meta.tenant_id}},
                    {"term": {"document_id": meta.document_id}},
                    {"term": {"version": meta.version}},
                ]
            }
        }

    @_engine_errors
    def existing_chunk_ids(self, meta: DocumentMeta, model_id: str) -> set[str]:
        query = self._version_query(meta)
        query["bool"]["filter"].append({"term": {"embedding_model_id": model_id}})
        return {s["chunk_id"] for s in self._scan(query, ["chunk_id"])}

    @_engine_errors
    def replace_document_version(self, meta, chunks, vectors, model_id) -> UpsertResult:
        stored = {
            s["chunk_id"]: s["embedding_model_id"]
            for s in self._scan(self._version_query(meta), ["chunk_id", "embedding_model_id"])
        }
        new_ids = {c.chunk_id for c in chunks}
        stale = [cid for cid, mid in stored.items() if cid not in new_ids or mid != model_id]
        governance = _governance(meta)
        actions, written, unchanged, now = [], 0, 0, utc_now()
        for chunk in chunks:
            if stored.get(chunk.chunk_id) == model_id:
                # Same content: only governance metadata may have changed (and view vectors given for a
                # chunk stored without them, e.g. by a copy, are added: a partial update merges into payload).
                doc = (
                    governance
                    if chunk.views is None
                    else {**governance, "payload": {"views": _views_json(chunk.views)}}
                )
                actions.append({"_op_type": "update", "_id": chunk.chunk_id, "doc": doc})
                unchanged += 1
                continue
            vector = new_chunk_vector(vectors, chunk, meta)
            self._ensure_vector_field(len(vector))
            actions.append(
                {
                    "_op_type": "index",
                    "_id": chunk.chunk_id,
                    "_source": _chunk_source(chunk, meta, governance, model_id, vector, now),
                }
            )
            written += 1
        # Deletes go last so that a reader never finds the document missing. A chunk re-embedded by
        # another model counts as removed and written, but its id was just overwritten: keep it.
        actions += [{"_op_type": "delete", "_id": cid} for cid in stale if cid not in new_ids]
        if actions:
            self._bulk(actions)
        return UpsertResult(written=written, unchanged=unchanged, removed=len(stale))

    @_engine_errors
    def bulk_add(self, documents: Iterable[DocumentVersion], model_id: str) -> int:
        """Initial load or re-embedding of documents whose versions are not in the index yet: one
        streaming bulk, no per-document look-ups or refreshes. Call refresh() afterwards."""
        now = utc_now()

        def actions():
            for meta, chunks, vectors in documents:
                governance = _governance(meta)
                for chunk in chunks:
                    vector = np.asarray(vectors[chunk.chunk_id], dtype=np.float32)
                    self._ensure_vector_field(len(vector))
                    yield {
                        "_op_type": "index",
                        "_id": chunk.chunk_id,
                        "_source": _chunk_source(chunk, meta, governance, model_id, vector, now),
                    }

        return self._bulk(actions(), refresh=False)

    def export(self, tenant_id: str) -> Iterator[DocumentVersion]:
        """Every stored document version of the tenant with its vectors, one version's chunks together."""
        for hits in self.version_groups({"term": {"tenant_id": tenant_id}}):
            yield _document_version(hits)

    def version_groups(self, query: dict, source: list[str] | None = None) -> Iterator[list[dict]]:
        """The matching chunks' hits (their `source` fields, or all but the vector's), one list per document
        version in (document_id, version) order, paged with search_after: no result-window limit, and the
        searches run only as far as the caller reads."""
        body: dict = {
            "size": _PAGE,
            "query": query,
            "sort": [{"document_id": "asc"}, {"version": "asc"}, {"chunk_id": "asc"}],
        }
        if source is not None:
            body["_source"] = source
        key: tuple[str, str] | None = None
        hits: list[dict] = []
        while True:
            page = self._search_hits(body)
            for hit in page:
                found = (hit["_source"]["document_id"], hit["_source"]["version"])
                if found != key and hits:
                    yield hits
                    hits = []
                key = found
                hits.append(hit)
            if len(page) < _PAGE:
                break
            body["search_after"] = page[-1]["sort"]
        if hits:
            yield hits

    @_engine_errors
    def _search_hits(self, body: dict) -> list[dict]:
        # A generator's body runs after the decorator returned: its searches carry the decorator themselves.
        return self.client.search(index=self.index, body=body)["hits"]["hits"]

    def _bulk(self, actions: Iterable[dict], refresh: bool | None = None) -> int:
        refresh = self.refresh_on_write if refresh is None else refresh
        done, errors = helpers.bulk(
            self.client,
            actions,
            index=self.index,
            refresh=refresh,
            raise_on_error=False,
            chunk_size=500,
            max_chunk_bytes=20 * 1024 * 1024,
        )
        if errors:
            first = next(iter(errors[0].values()))
            raise FailedPrecondition(
                f"OpenSearch refused {len(errors)} writes to {self.index!r}; first: {first.get('error')}"
            )
        return done

    @_engine_errors
    def document_scopes(self, tenant_id: str, document_id: str) -> set[str]:
        query = {"bool": {"filter": [{"term": {"tenant_id": tenant_id}}, {"term": {"document_id": document_id}}]}}
        return {scope for s in self._scan(query, ["access_scopes"]) for scope in s.get("access_scopes", [])}

    @_engine_errors
    def delete_document(self, tenant_id: str, document_id: str) -> int:
        # By explicit ids: _delete_by_query lives in the reindex module, which the node may lack.
        query = {"bool": {"filter": [{"term": {"tenant_id": tenant_id}}, {"term": {"document_id": document_id}}]}}
        ids = [s["chunk_id"] for s in self._scan(query, ["chunk_id"])]
        if ids:
            self._bulk([{"_op_type": "delete", "_id": cid} for cid in ids], refresh=True)
        return len(ids)

    # ---- reads (retriever) ------------------------------------------------------------------

    @staticmethod
    def _filters(tenant_id: str, filters: SearchFilters) -> list[dict]:
        """The filter clauses every read shares, so BM25 and k-NN see exactly the same chunks."""
        clauses: list[dict] = [
            {"term": {"tenant_id": tenant_id}},
            {"terms": {"access_scopes": visible_scopes(filters.access_scopes)}},
        ]
        if not filters.include_superseded:
            as_of = normalize_time(filters.as_of, "filters.as_of") or utc_now()
            clauses += [{"range": {"effective_from": {"lte": as_of}}}, {"range": {"effective_to": {"gt": as_of}}}]
        for field, values in (("document_id", filters.document_ids), ("content_type", filters.content_types)):
            if values:
                clauses.append({"terms": {field: list(values)}})
        if filters.exclude_document_ids:
            clauses.append({"bool": {"must_not": {"terms": {"document_id": list(filters.exclude_document_ids)}}}})
        return clauses

    @_engine_errors
    def bm25(self, tenant_id: str, query: str, filters: SearchFilters, top_k: int) -> list[SearchHit]:
        phrases = search_phrases(query)
        if not phrases:
            return []
        body = {
            "size": top_k,
            "_source": {"excludes": _SOURCE_EXCLUDES},
            "query": {
                "bool": {
                    "should": [{"match_phrase": {"search_text": p}} for p in phrases],
                    "minimum_should_match": 1,
                    "filter": self._filters(tenant_id, filters),
                }
            },
        }
        hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
        return [_deferred_hit(h, float(h["_score"])) for h in hits]

    @_engine_errors
    def knn(self, tenant_id, vector, model_id, filters, top_k) -> list[SearchHit]:
        if self._vector_dimension() is None:
            return []  # nothing was ever embedded into this index
        # The filter sits inside the knn query: Lucene searches the graph among the allowed documents
        # (or exactly, when they are few), so top_k survives any filter.
        search = {
            "size": top_k,
            "_source": {"excludes": _SOURCE_EXCLUDES},
            "query": {
                "knn": {
                    "embedding": {
                        "vector": _vector_json(np.asarray(vector, dtype=np.float32)),
                        "k": top_k,
                        "filter": {"bool": {"filter": self._filters(tenant_id, filters)}},
                        "method_parameters": {"ef_search": max(self.hnsw.ef_search, top_k)},
                    }
                }
            },
        }
        # The model check rides in the same round trip: does the tenant hold any chunk embedded by
        # another model? terminate_after stops at the first one, where an aggregation would read
        # every chunk of the tenant on every query.
        other_model = {
            "size": 0,
            "terminate_after": 1,
            "track_total_hits": True,
            "query": {
                "bool": {
                    "filter": [{"term": {"tenant_id": tenant_id}}],
                    "must_not": [{"term": {"embedding_model_id": model_id}}],
                }
            },
        }
        header = {"index": self.index}
        found, mismatch = self.client.msearch(body=[header, search, header, other_model])["responses"]
        if "error" not in mismatch and mismatch["hits"]["total"]["value"] > 0:
            stored_models = self._model_ids(tenant_id)
            raise FailedPrecondition(
                f"embedding model mismatch for tenant {tenant_id!r}: the index holds vectors of "
                f"{stored_models}, the query was embedded with {model_id!r}; re-embed or switch models"
            )
        if "error" in found or "error" in mismatch:
            failed = found if "error" in found else mismatch
            raise TransportError(failed.get("status", 500), failed["error"].get("type", "error"), failed["error"])
        # Lucene scores cosinesimil as (1 + cos) / 2; callers get the cosine the embedded backend reports.
        return [_deferred_hit(h, 2.0 * float(h["_score"]) - 1.0) for h in found["hits"]["hits"]]

    def _model_ids(self, tenant_id: str) -> list[str]:
        body = {
            "size": 0,
            "query": {"term": {"tenant_id": tenant_id}},
            "aggs": {"models": {"terms": {"field": "embedding_model_id", "size": 100}}},
        }
        buckets = self.client.search(index=self.index, body=body)["aggregations"]["models"]["buckets"]
        return sorted(b["key"] for b in buckets)

    @_engine_errors
    def get_chunk(self, tenant_id: str, chunk_id: str, access_scopes: list[str]) -> Chunk | None:
        body = {
            "size": 1,
            "_source": {"excludes": _SOURCE_EXCLUDES},
            "query": {
                "bool": {
                    "filter": [
                        {"ids": {"values": [chunk_id]}},
                        {"term": {"tenant_id": tenant_id}},
                        {"terms": {"access_scopes": visible_scopes(access_scopes)}},
                    ]
                }
            },
        }
        hits = self.client.search(index=self.index, body=body)["hits"]["hits"]
        return _hit_to_chunk(hits[0]) if hits else None

    @_engine_errors
    def count_chunks(self) -> int:
        return int(self.client.count(index=self.index)["count"])

    @_engine_errors
    def stats(self, tenant_id: str) -> dict:
        body = {
            "size": 0,
            "track_total_hits": True,
            "query": {"term": {"tenant_id": tenant_id}},
            "aggs": {"documents": {"cardinality": {"field": "document_id", "precision_threshold": 40000}}},
        }
        result = self.client.search(index=self.index, body=body)
        return {
            "chunks": result["hits"]["total"]["value"],
            "documents": result["aggregations"]["documents"]["value"],
            "model_ids": self._model_ids(tenant_id),
        }


def _governance(meta: DocumentMeta) -> dict:
    """The fields a new version of an unchanged chunk may change."""
    return {
        "effective_from": normalize_time(meta.effective_from, "effective_from") or utc_now(),
        "effective_to": normalize_time(meta.effective_to, "effective_to") or OPEN_END,
        "access_scopes": sorted(set(meta.access_scopes)) or [PUBLIC_SCOPE],
        "source_uri": meta.source_uri,
        "title": meta.title,
        "source_sha256": meta.source_sha256,
    }


def _vector_json(vector: np.ndarray) -> list[float]:
    """float32 -> JSON numbers rounded to 8 decimals: half the bytes of full float64 reprs, and
    Lucene keeps float32 anyway (a 384-d unit vector's cosine moves by ~1e-7 at most)."""
    return np.round(vector.astype(np.float64), 8).tolist()


def _chunk_source(
    chunk: Chunk, meta: DocumentMeta, governance: dict, model_id: str, vector: np.ndarray, now: str
) -> dict:
    return {
        "chunk_id": chunk.chunk_id,
        "tenant_id": meta.tenant_id,
        "document_id": meta.document_id,
        "version": meta.version,
        "content_type": meta.content_type,
        "embedding_model_id": model_id,
        **governance,
        "indexed_at": now,
        # search_text is the chunk's embed_text (heading path + body): BM25 sees what the embedder saw.
        "search_text": chunk.embed_text,
        "embedding": _vector_json(vector),
        "payload": {
            "heading_path": chunk.heading_path,
            "body": chunk.body,
            "char_start": chunk.char_start,
            "char_end": chunk.char_end,
            "parent_section_id": chunk.parent_section_id,
            "section_text": chunk.section_text,
            "token_count": chunk.token_count,
            "position": chunk.position,
            # The maxsim reranker's view vectors: in the chunk's own document (written and deleted with
            # it), unindexed like the rest of the payload.
            **({"views": _views_json(chunk.views)} if chunk.views is not None else {}),
        },
    }


def _views_json(views: ViewVectors) -> dict:
    """View vectors in _source: the packed bytes as base64 (JSON has no bytes; float16 stays 2 bytes a number
    before base64's third, where JSON floats would take ~10)."""
    return {
        "model_id": views.model_id,
        "dtype": views.dtype,
        "dim": views.dim,
        "units": views.units,
        "vectors": base64.b64encode(views.vectors).decode("ascii"),
    }


def _views_from_json(stored: dict | None) -> ViewVectors | None:
    if not stored:
        return None
    return ViewVectors(
        model_id=stored["model_id"],
        dim=int(stored["dim"]),
        units=[int(u) for u in stored["units"]],
        vectors=base64.b64decode(stored["vectors"]),
        dtype=stored["dtype"],
    )


def _document_version(hits: list[dict]) -> DocumentVersion:
    """One version's hits (each with its embedding) as (meta, chunks in document order, vectors)."""
    chunks = sorted((_hit_to_chunk(h) for h in hits), key=lambda c: c.position)
    vectors = {h["_source"]["chunk_id"]: np.asarray(h["_source"]["embedding"], dtype=np.float32) for h in hits}
    return chunks[0].meta, chunks, vectors


def _deferred_hit(hit: dict, score: float) -> SearchHit:
    """A hit whose chunk (its view vectors decoded) is built only if the caller keeps it: fusion keeps the top k."""
    return SearchHit.deferred(hit["_source"]["chunk_id"], score, functools.partial(_hit_to_chunk, hit))


def _hit_to_chunk(hit: dict) -> Chunk:
    s, p = hit["_source"], hit["_source"]["payload"]
    meta = DocumentMeta(
        tenant_id=s["tenant_id"],
        document_id=s["document_id"],
        version=s["version"],
        access_scopes=list(s["access_scopes"]),
        effective_from=s["effective_from"],
        effective_to="" if s["effective_to"] == OPEN_END else s["effective_to"],
        source_uri=s["source_uri"],
        content_type=s["content_type"],
        title=s["title"],
        source_sha256=s["source_sha256"],
    )
    return Chunk(
        chunk_id=s["chunk_id"],
        meta=meta,
        heading_path=list(p["heading_path"]),
        body=p["body"],
        embed_text=s["search_text"],
        char_start=p["char_start"],
        char_end=p["char_end"],
        parent_section_id=p["parent_section_id"],
        token_count=p["token_count"],
        position=p["position"],
        section_text=p["section_text"],
        embedding_model_id=s["embedding_model_id"],
        views=_views_from_json(p.get("views")),
    )
