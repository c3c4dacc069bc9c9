"""The embedded index: SQLite FTS5 (porter) for BM25 plus exact vector search over stored embeddings.

One writer process (the indexer) and any number of reader processes (retriever replicas) share one
file: WAL mode lets readers run while the writer commits. Readers cache each tenant's vectors and
refresh when the writer bumps the generation counter.
"""

import json
import os
import re
import sqlite3
import threading

import numpy as np

from shared.errors import FailedPrecondition
from shared.index.base import SearchHit, UpsertResult
from shared.model import (
    PUBLIC_SCOPE,
    Chunk,
    DocumentMeta,
    SearchFilters,
    normalize_time,
    utc_now,
    visible_scopes,
)
from shared.sqlite import ThreadLocalSQLite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('generation', '0');
CREATE TABLE IF NOT EXISTS chunks (
  rowid INTEGER PRIMARY KEY,
  chunk_id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  document_id TEXT NOT NULL,
  version TEXT NOT NULL,
  effective_from TEXT NOT NULL,
  effective_to TEXT NOT NULL,
  access_scopes TEXT NOT NULL,
  source_uri TEXT NOT NULL,
  content_type TEXT NOT NULL,
  title TEXT NOT NULL,
  source_sha256 TEXT NOT NULL,
  heading_path TEXT NOT NULL,
  body TEXT NOT NULL,
  embed_text TEXT NOT NULL,
  char_start INTEGER NOT NULL,
  char_end INTEGER NOT NULL,
  parent_section_id TEXT NOT NULL,
  section_text TEXT NOT NULL,
  token_count INTEGER NOT NULL,
  position INTEGER NOT NULL,
  embedding_model_id TEXT NOT NULL,
  embedding BLOB NOT NULL,
  indexed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (tenant_id, document_id, version);
CREATE TABLE IF NOT EXISTS chunk_scopes (
  chunk_rowid INTEGER NOT NULL,
  scope TEXT NOT NULL,
  PRIMARY KEY (chunk_rowid, scope)
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(search_text, tokenize='porter unicode61');
"""

_WORD = re.compile(r"\w+", re.UNICODE)
_MAX_QUERY_TERMS = 64


def fts_query(text: str) -> str:
    """User text -> a safe FTS5 expression: each whitespace token becomes a quoted term or phrase
    (so "E-4412" stays one phrase), OR-ed together. No user text reaches FTS5's query syntax."""
    terms = []
    for token in text.split():
        words = _WORD.findall(token)
        if words:
            terms.append('"' + " ".join(words) + '"')
        if len(terms) >= _MAX_QUERY_TERMS:
            break
    return " OR ".join(dict.fromkeys(terms))


class EmbeddedIndex:
    name = "embedded"

    def __init__(self, path: str):
        self.path = path
        self._db = ThreadLocalSQLite(path)
        self._cache_lock = threading.Lock()
        self._vector_cache: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}

    def warm_up(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        conn = self._conn()
        conn.executescript(_SCHEMA)
        conn.commit()

    def _conn(self) -> sqlite3.Connection:
        return self._db.connection()

    # ---- writes (indexer) -------------------------------------------------------------------

    def existing_chunk_ids(self, meta: DocumentMeta, model_id: str) -> set[str]:
        rows = self._conn().execute(
            "SELECT chunk_id FROM chunks WHERE tenant_id=? AND document_id=? AND version=? "
            "AND embedding_model_id=?",
            (meta.tenant_id, meta.document_id, meta.version, model_id),
        )
        return {r[0] for r in rows}

    def replace_document_version(self, meta, chunks, vectors, model_id) -> UpsertResult:
        conn = self._conn()
        new_ids = {c.chunk_id for c in chunks}
        eff_from = normalize_time(meta.effective_from, "effective_from") or utc_now()
        eff_to = normalize_time(meta.effective_to, "effective_to")
        scopes = sorted(set(meta.access_scopes)) or [PUBLIC_SCOPE]
        conn.execute("BEGIN IMMEDIATE")
        try:
            stored = {
                r["chunk_id"]: (r["rowid"], r["embedding_model_id"])
                for r in conn.execute(
                    "SELECT rowid, chunk_id, embedding_model_id FROM chunks "
                    "WHERE tenant_id=? AND document_id=? AND version=?",
                    (meta.tenant_id, meta.document_id, meta.version),
                )
            }
            stale = [rowid for cid, (rowid, mid) in stored.items() if cid not in new_ids or mid != model_id]
            self._delete_rows(conn, stale)
            written = unchanged = 0
            now = utc_now()
            for chunk in chunks:
                kept = stored.get(chunk.chunk_id)
                if kept and kept[1] == model_id:
                    # Same content: only governance metadata may have changed.
                    conn.execute(
                        "UPDATE chunks SET effective_from=?, effective_to=?, access_scopes=?, source_uri=?, "
                        "title=?, source_sha256=? WHERE rowid=?",
                        (eff_from, eff_to, json.dumps(scopes), meta.source_uri, meta.title,
                         meta.source_sha256, kept[0]),
                    )
                    conn.execute("DELETE FROM chunk_scopes WHERE chunk_rowid=?", (kept[0],))
                    conn.executemany("INSERT INTO chunk_scopes VALUES (?, ?)", [(kept[0], s) for s in scopes])
                    unchanged += 1
                    continue
                vector = np.asarray(vectors[chunk.chunk_id], dtype=np.float32)
                cur = conn.execute(
                    "INSERT INTO chunks (chunk_id, tenant_id, document_id, version, effective_from, "
                    "effective_to, access_scopes, source_uri, content_type, title, source_sha256, "
                    "heading_path, body, embed_text, char_start, char_end, parent_section_id, "
                    "section_text, token_count, position, embedding_model_id, embedding, indexed_at) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (chunk.chunk_id, meta.tenant_id, meta.document_id, meta.version, eff_from, eff_to,
                     json.dumps(scopes), meta.source_uri, meta.content_type, meta.title,
                     meta.source_sha256, json.dumps(chunk.heading_path), chunk.body, chunk.embed_text,
                     chunk.char_start, chunk.char_end, chunk.parent_section_id, chunk.section_text,
                     chunk.token_count, chunk.position, model_id, vector.tobytes(), now),
                )
                rowid = cur.lastrowid
                conn.executemany("INSERT INTO chunk_scopes VALUES (?, ?)", [(rowid, s) for s in scopes])
                conn.execute("INSERT INTO chunks_fts (rowid, search_text) VALUES (?, ?)", (rowid, chunk.embed_text))
                written += 1
            self._bump_generation(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return UpsertResult(written=written, unchanged=unchanged, removed=len(stale))

    def document_scopes(self, tenant_id: str, document_id: str) -> set[str]:
        rows = self._conn().execute("SELECT DISTINCT access_scopes FROM chunks WHERE tenant_id=? AND document_id=?",
                                    (tenant_id, document_id))
        return {scope for (scopes,) in rows for scope in json.loads(scopes)}

    def delete_document(self, tenant_id: str, document_id: str) -> int:
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            rowids = [r[0] for r in conn.execute(
                "SELECT rowid FROM chunks WHERE tenant_id=? AND document_id=?", (tenant_id, document_id))]
            self._delete_rows(conn, rowids)
            self._bump_generation(conn)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return len(rowids)

    @staticmethod
    def _delete_rows(conn: sqlite3.Connection, rowids: list[int]) -> None:
        # Every derived artefact goes with the row: lexical, vector (same row) and scope entries.
        for table, column in (("chunks_fts", "rowid"), ("chunk_scopes", "chunk_rowid"), ("chunks", "rowid")):
            conn.executemany(f"DELETE FROM {table} WHERE {column}=?", [(r,) for r in rowids])

    @staticmethod
    def _bump_generation(conn: sqlite3.Connection) -> None:
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")

    # ---- reads (retriever) ------------------------------------------------------------------

    def _filter_sql(self, tenant_id: str, filters: SearchFilters) -> tuple[str, list]:
        """The WHERE clause every read shares, so BM25 and k-NN see exactly the same rows."""
        clauses = ["c.tenant_id = ?"]
        params: list = [tenant_id]
        scopes = visible_scopes(filters.access_scopes)
        clauses.append(
            "EXISTS (SELECT 1 FROM chunk_scopes s WHERE s.chunk_rowid = c.rowid "
            f"AND s.scope IN ({','.join('?' * len(scopes))}))"
        )
        params += scopes
        if not filters.include_superseded:
            as_of = normalize_time(filters.as_of, "filters.as_of") or utc_now()
            clauses.append("c.effective_from <= ? AND (c.effective_to = '' OR c.effective_to > ?)")
            params += [as_of, as_of]
        for column, values in (("document_id", filters.document_ids), ("content_type", filters.content_types)):
            if values:
                clauses.append(f"c.{column} IN ({','.join('?' * len(values))})")
                params += list(values)
        return " AND ".join(clauses), params

    def bm25(self, tenant_id: str, query: str, filters: SearchFilters, top_k: int) -> list[SearchHit]:
        expression = fts_query(query)
        if not expression:
            return []
        where, params = self._filter_sql(tenant_id, filters)
        rows = self._conn().execute(
            f"SELECT c.*, bm25(chunks_fts) AS score FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND {where} ORDER BY score LIMIT ?",
            [expression, *params, top_k],
        ).fetchall()
        # FTS5's bm25() is negative (lower is better); report the conventional positive score.
        return [SearchHit(chunk=_row_to_chunk(r), score=-float(r["score"])) for r in rows]

    def _tenant_vectors(self, tenant_id: str) -> tuple[np.ndarray, np.ndarray]:
        conn = self._conn()
        generation = int(conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])
        with self._cache_lock:
            cached = self._vector_cache.get(tenant_id)
            if cached and cached[0] == generation:
                return cached[1], cached[2]
        rows = conn.execute("SELECT rowid, embedding FROM chunks WHERE tenant_id=?", (tenant_id,)).fetchall()
        rowids = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = (np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
                  if rows else np.zeros((0, 0), dtype=np.float32))
        with self._cache_lock:
            self._vector_cache[tenant_id] = (generation, rowids, matrix)
        return rowids, matrix

    def _model_ids(self, tenant_id: str) -> list[str]:
        rows = self._conn().execute(
            "SELECT DISTINCT embedding_model_id FROM chunks WHERE tenant_id=?", (tenant_id,))
        return [r[0] for r in rows]

    def knn(self, tenant_id, vector, model_id, filters, top_k) -> list[SearchHit]:
        stored_models = self._model_ids(tenant_id)
        if stored_models and stored_models != [model_id]:
            raise FailedPrecondition(
                f"embedding model mismatch for tenant {tenant_id!r}: the index holds vectors of "
                f"{stored_models}, the query was embedded with {model_id!r}; re-embed or switch models"
            )
        rowids, matrix = self._tenant_vectors(tenant_id)
        if len(rowids) == 0:
            return []
        where, params = self._filter_sql(tenant_id, filters)
        conn = self._conn()
        allowed = np.array([r[0] for r in conn.execute(f"SELECT c.rowid FROM chunks c WHERE {where}", params)],
                           dtype=np.int64)
        mask = np.isin(rowids, allowed)
        if not mask.any():
            return []
        candidate_rows = rowids[mask]
        scores = matrix[mask] @ np.asarray(vector, dtype=np.float32)
        k = min(top_k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        chosen = [int(candidate_rows[i]) for i in top]
        by_rowid = {r["rowid"]: r for r in conn.execute(
            f"SELECT c.* FROM chunks c WHERE c.rowid IN ({','.join('?' * len(chosen))})", chosen)}
        return [SearchHit(chunk=_row_to_chunk(by_rowid[r]), score=float(scores[i]))
                for r, i in zip(chosen, top, strict=True)]

    def get_chunk(self, tenant_id: str, chunk_id: str, access_scopes: list[str]) -> Chunk | None:
        scopes = visible_scopes(access_scopes)
        row = self._conn().execute(
            "SELECT c.* FROM chunks c WHERE c.tenant_id=? AND c.chunk_id=? AND EXISTS (SELECT 1 FROM "
            f"chunk_scopes s WHERE s.chunk_rowid=c.rowid AND s.scope IN ({','.join('?' * len(scopes))}))",
            [tenant_id, chunk_id, *scopes],
        ).fetchone()
        return _row_to_chunk(row) if row else None

    def export(self, tenant_id: str):
        """Every stored document version of a tenant as (meta, chunks, vectors by chunk id), for
        moving an index to another backend without re-embedding."""
        rows = self._conn().execute(
            "SELECT c.* FROM chunks c WHERE c.tenant_id=? ORDER BY document_id, version, position", (tenant_id,))
        key, chunks, vectors = None, [], {}
        for row in rows:
            chunk = _row_to_chunk(row)
            if (chunk.meta.document_id, chunk.meta.version) != key and chunks:
                yield chunks[0].meta, chunks, vectors
                chunks, vectors = [], {}
            key = (chunk.meta.document_id, chunk.meta.version)
            chunks.append(chunk)
            vectors[chunk.chunk_id] = np.frombuffer(row["embedding"], dtype=np.float32)
        if chunks:
            yield chunks[0].meta, chunks, vectors

    def count_chunks(self) -> int:
        return int(self._conn().execute("SELECT COUNT(*) FROM chunks").fetchone()[0])

    def stats(self, tenant_id: str) -> dict:
        conn = self._conn()
        chunks, docs = conn.execute(
            "SELECT COUNT(*), COUNT(DISTINCT document_id) FROM chunks WHERE tenant_id=?", (tenant_id,)
        ).fetchone()
        return {"chunks": chunks, "documents": docs, "model_ids": self._model_ids(tenant_id)}


def _row_to_chunk(row: sqlite3.Row) -> Chunk:
    meta = DocumentMeta(
        tenant_id=row["tenant_id"], document_id=row["document_id"], version=row["version"],
        access_scopes=json.loads(row["access_scopes"]), effective_from=row["effective_from"],
        effective_to=row["effective_to"], source_uri=row["source_uri"], content_type=row["content_type"],
        title=row["title"], source_sha256=row["source_sha256"],
    )
    return Chunk(
        chunk_id=row["chunk_id"], meta=meta, heading_path=json.loads(row["heading_path"]), body=row["body"],
        embed_text=row["embed_text"], char_start=row["char_start"], char_end=row["char_end"],
        parent_section_id=row["parent_section_id"], token_count=row["token_count"], position=row["position"],
        section_text=row["section_text"], embedding_model_id=row["embedding_model_id"],
    )
