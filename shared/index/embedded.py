"""The embedded index: SQLite FTS5 (porter) for BM25 plus exact vector search over stored embeddings.

One writer process (the indexer) and any number of reader processes (retriever replicas) share one
file: WAL mode lets readers run while the writer commits. SQLite is the source of truth; each reader
keeps, per tenant, an in-memory float32 matrix of the tenant's vectors plus one metadata array per
filter field (scope set, effective dates, document, content type, model), so a k-NN query is one
vectorised filter mask and one matrix-vector product (exact search). Every write bumps the
`generation` counter and logs the row ids it touched (`chunk_log`) in the same transaction; a reader
checks the counter inside the query's read transaction and applies only the logged rows (a full
reload when its generation is older than the log it can still see), so it never ranks a deleted row
or another tenant's. Once a tenant's view is built, BM25 is ranked through it as well: each query phrase's
postings are read from FTS5's own index and scored with FTS5's bm25 formula, top k only, the filters
applied as the view's masks (shared/index/fts_bm25.py), instead of FTS5 scoring every match.
k-NN scans 8-bit codes (over BINARY_MIN_ROWS visible rows 1-bit codes first) and rescores a shortlist in float32.
"""

import functools
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

import numpy as np

from shared import config
from shared.errors import FailedPrecondition
from shared.index import fts_bm25
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
from shared.sqlite import ThreadLocalSQLite, write_transaction

_SCHEMA = f"""
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
  indexed_at TEXT NOT NULL,
  view_model_id TEXT NOT NULL DEFAULT '',
  view_dtype TEXT NOT NULL DEFAULT '',
  view_dim INTEGER NOT NULL DEFAULT 0,
  view_units TEXT NOT NULL DEFAULT '[]',
  view_vectors BLOB
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks (tenant_id, document_id, version);
CREATE TABLE IF NOT EXISTS chunk_scopes (
  chunk_rowid INTEGER NOT NULL,
  scope TEXT NOT NULL,
  PRIMARY KEY (chunk_rowid, scope)
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(search_text, tokenize='{fts_bm25.FTS_TOKENIZE}');
-- Which rows each generation touched (inserted, updated or deleted), so readers' in-memory vector
-- views apply a write instead of reloading the tenant. Pruned to the last _LOG_KEEP generations;
-- log_floor is the oldest generation a view may still be incrementally refreshed from.
CREATE TABLE IF NOT EXISTS chunk_log (
  generation INTEGER NOT NULL,
  tenant_id TEXT NOT NULL,
  chunk_rowid INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunk_log_tenant ON chunk_log (tenant_id, generation);
CREATE INDEX IF NOT EXISTS chunk_log_generation ON chunk_log (generation);
INSERT OR IGNORE INTO meta SELECT 'log_floor', value FROM meta WHERE key='generation';
"""

# The maxsim reranker's view vectors (shared/embedding/views.py) sit in the chunk's own row, last, so they
# are written, replaced and deleted (erased, purged) with it; reads that do not name them never touch their
# overflow pages. Files made before they existed gain the columns at warm-up (empty: the reranker embeds).
_VIEW_COLUMNS = (
    ("view_model_id", "TEXT NOT NULL DEFAULT ''"),
    ("view_dtype", "TEXT NOT NULL DEFAULT ''"),
    ("view_dim", "INTEGER NOT NULL DEFAULT 0"),
    ("view_units", "TEXT NOT NULL DEFAULT '[]'"),
    ("view_vectors", "BLOB"),
)

_LOG_KEEP = 2000
# A view refreshes incrementally unless the writes touched more than this share of its rows (and
# over 1000 rows): then reloading the tenant is cheaper.
_RELOAD_SHARE = 0.5
# Dead (replaced or deleted) slots are compacted away once they are this share of a view.
_COMPACT_SHARE = 0.25
# The scan's constants are public: loadtest/bench_retrieval.py prints them in its table's header.
# The 8-bit scan hands this many times top_k (at least RESCORE_MIN) rows to exact rescoring
# (recall@50 against exact search: 1.000 at 100k rows in loadtest/bench_retrieval.py).
RESCORE_FACTOR = 4
RESCORE_MIN = 200
# Over at least this many visible rows the 8-bit scan is preceded by a 1-bit one (_BinaryScan), whose best
# max(BINARY_FACTOR * top_k, BINARY_MIN) are rescored exactly (recall@50 against exact search at 1M rows
# in loadtest/bench_retrieval.py: see the README); fewer visible rows (a small tenant, a narrow filter) go
# through the 8-bit scan, whose recall is 1.000 there.
BINARY_MIN_ROWS = 200_000
BINARY_FACTOR = 80
BINARY_MIN = 4000
_FOREVER = np.iinfo(np.int64).max
_PARAMS_PER_QUERY = 500


def fts_query(text: str) -> str:
    """User text -> a safe FTS5 expression: the shared search phrases (shared.index.lexical), each
    quoted, OR-ed together."""
    return " OR ".join(f'"{phrase}"' for phrase in search_phrases(text))


class EmbeddedIndex:
    name = "embedded"

    def __init__(self, path: str):
        self.path = path
        # Reads map the file (no read() copy per page) and keep a larger page cache: k-NN fetches its
        # top k rows by id, scattered over the file.
        # secure_delete: a deleted row's bytes are overwritten, not left in free pages (erasure relies on it;
        # SQLite's compiled-in default varies between builds, so it is set explicitly).
        # BM25's postings vocabulary is a temp table: made once per connection as it opens, not per query.
        self._vocabulary, create_vocabulary = fts_bm25.vocabulary()
        self._db = ThreadLocalSQLite(
            path,
            pragmas=(
                "PRAGMA mmap_size=1073741824",
                "PRAGMA cache_size=-32768",
                "PRAGMA secure_delete=ON",
                create_vocabulary,
            ),
        )
        self._cache_lock = threading.Lock()
        self._vector_cache: dict[str, _VectorView] = {}
        self._tenant_locks: dict[str, threading.Lock] = {}

    def warm_up(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        conn = self._conn()
        conn.executescript(_SCHEMA)
        conn.commit()
        self._add_view_columns(conn)

    @staticmethod
    def _add_view_columns(conn: sqlite3.Connection) -> None:
        have = {r[1] for r in conn.execute("PRAGMA table_info(chunks)")}
        for name, decl in _VIEW_COLUMNS:
            if name in have:
                continue
            try:
                conn.execute(f"ALTER TABLE chunks ADD COLUMN {name} {decl}")
                conn.commit()
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc):
                    raise

    def _conn(self) -> sqlite3.Connection:
        return self._db.connection()

    # ---- writes (indexer) -------------------------------------------------------------------

    def existing_chunk_ids(self, meta: DocumentMeta, model_id: str) -> set[str]:
        rows = self._conn().execute(
            "SELECT chunk_id FROM chunks WHERE tenant_id=? AND document_id=? AND version=? AND embedding_model_id=?",
            (meta.tenant_id, meta.document_id, meta.version, model_id),
        )
        return {r[0] for r in rows}

    def replace_document_version(self, meta, chunks, vectors, model_id) -> UpsertResult:
        conn = self._conn()
        new_ids = {c.chunk_id for c in chunks}
        eff_from = normalize_time(meta.effective_from, "effective_from") or utc_now()
        eff_to = normalize_time(meta.effective_to, "effective_to")
        scopes = sorted(set(meta.access_scopes)) or [PUBLIC_SCOPE]
        with write_transaction(conn):
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
            touched = list(stale)
            written = unchanged = 0
            now = utc_now()
            for chunk in chunks:
                kept = stored.get(chunk.chunk_id)
                if kept and kept[1] == model_id:
                    # Same content: only governance metadata may have changed.
                    conn.execute(
                        "UPDATE chunks SET effective_from=?, effective_to=?, access_scopes=?, source_uri=?, "
                        "title=?, source_sha256=? WHERE rowid=?",
                        (
                            eff_from,
                            eff_to,
                            json.dumps(scopes),
                            meta.source_uri,
                            meta.title,
                            meta.source_sha256,
                            kept[0],
                        ),
                    )
                    if chunk.views is not None:  # e.g. a copy onto a row stored without them
                        conn.execute(
                            "UPDATE chunks SET view_model_id=?, view_dtype=?, view_dim=?, view_units=?, "
                            "view_vectors=? WHERE rowid=?",
                            (*_view_values(chunk), kept[0]),
                        )
                    conn.execute("DELETE FROM chunk_scopes WHERE chunk_rowid=?", (kept[0],))
                    conn.executemany("INSERT INTO chunk_scopes VALUES (?, ?)", [(kept[0], s) for s in scopes])
                    touched.append(kept[0])
                    unchanged += 1
                    continue
                vector = new_chunk_vector(vectors, chunk, meta)
                cur = conn.execute(
                    "INSERT INTO chunks (chunk_id, tenant_id, document_id, version, effective_from, "
                    "effective_to, access_scopes, source_uri, content_type, title, source_sha256, "
                    "heading_path, body, embed_text, char_start, char_end, parent_section_id, "
                    "section_text, token_count, position, embedding_model_id, embedding, indexed_at, "
                    "view_model_id, view_dtype, view_dim, view_units, view_vectors) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        chunk.chunk_id,
                        meta.tenant_id,
                        meta.document_id,
                        meta.version,
                        eff_from,
                        eff_to,
                        json.dumps(scopes),
                        meta.source_uri,
                        meta.content_type,
                        meta.title,
                        meta.source_sha256,
                        json.dumps(chunk.heading_path),
                        chunk.body,
                        chunk.embed_text,
                        chunk.char_start,
                        chunk.char_end,
                        chunk.parent_section_id,
                        chunk.section_text,
                        chunk.token_count,
                        chunk.position,
                        model_id,
                        vector.tobytes(),
                        now,
                        *_view_values(chunk),
                    ),
                )
                rowid = cur.lastrowid
                touched.append(rowid)
                conn.executemany("INSERT INTO chunk_scopes VALUES (?, ?)", [(rowid, s) for s in scopes])
                conn.execute("INSERT INTO chunks_fts (rowid, search_text) VALUES (?, ?)", (rowid, chunk.embed_text))
                written += 1
            self._bump_generation(conn, meta.tenant_id, touched)
        return UpsertResult(written=written, unchanged=unchanged, removed=len(stale))

    def document_scopes(self, tenant_id: str, document_id: str) -> set[str]:
        rows = self._conn().execute(
            "SELECT DISTINCT access_scopes FROM chunks WHERE tenant_id=? AND document_id=?", (tenant_id, document_id)
        )
        return {scope for (scopes,) in rows for scope in json.loads(scopes)}

    def delete_document(self, tenant_id: str, document_id: str) -> int:
        conn = self._conn()
        with write_transaction(conn):
            rowids = [
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM chunks WHERE tenant_id=? AND document_id=?", (tenant_id, document_id)
                )
            ]
            self._delete_rows(conn, rowids)
            self._bump_generation(conn, tenant_id, rowids)
        return len(rowids)

    def erase(self, tenant_id: str, document_id: str | None) -> int:
        """Removes every row of a document (all versions) or, with `document_id` None, of the whole tenant,
        and tells every reader's vector view of the tenant to reload rather than keep the rows' vectors in
        dead slots. Returns the rows removed."""
        conn = self._conn()
        with write_transaction(conn):
            sql, params = "SELECT rowid FROM chunks WHERE tenant_id=?", [tenant_id]
            if document_id is not None:
                sql, params = sql + " AND document_id=?", [tenant_id, document_id]
            rowids = [r[0] for r in conn.execute(sql, params)]
            self._delete_rows(conn, rowids)
            self._bump_generation(conn, tenant_id, rowids)
            conn.execute(
                "INSERT OR REPLACE INTO meta SELECT 'purge:' || ?, value FROM meta WHERE key='generation'", (tenant_id,)
            )
        return len(rowids)

    def purge(self) -> None:
        """Rewrites what still holds deleted rows: FTS5's segments (a delete only adds tombstones to
        them; 'optimize' merges them into one without the deleted entries) and the write-ahead log
        (checkpointed into the file and truncated). With secure_delete, freed pages are zeroed."""
        conn = self._conn()
        conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
        for _ in range(50):  # a reader inside a transaction holds the log; it finishes within ms
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            if not busy:
                return
            threading.Event().wait(0.1)

    def close_document(self, tenant_id: str, document_id: str, effective_to: str) -> int:
        """Ends the document's versions that are in force at `effective_to` there (another document
        replaces it). Returns the chunks updated."""
        end = normalize_time(effective_to, "effective_to")
        in_force_then = "effective_from < ? AND (effective_to = '' OR effective_to > ?)"
        return self._end_chunks(tenant_id, document_id, in_force_then, (end, end), end)

    def document_versions(self, tenant_id: str, document_id: str) -> list[tuple[str, str, str]]:
        """(version, effective_from, effective_to or "" when open) of each stored version of the document."""
        rows = self._conn().execute(
            "SELECT version, MIN(effective_from), MAX(effective_to) FROM chunks WHERE tenant_id=? AND document_id=? "
            "GROUP BY version",
            (tenant_id, document_id),
        )
        return [(r[0], r[1], r[2]) for r in rows]

    def end_version(self, tenant_id: str, document_id: str, version: str, end: str) -> int:
        """Ends one version of the document at `end` (a newer version begins then). Returns the chunks updated."""
        return self._end_chunks(tenant_id, document_id, "version = ?", (version,), end)

    def _end_chunks(self, tenant_id: str, document_id: str, where: str, params: tuple, end: str) -> int:
        """Sets `effective_to` of the document's chunks that match `where`, in one write with a new generation."""
        conn = self._conn()
        with write_transaction(conn):
            rowids = [
                r[0]
                for r in conn.execute(
                    f"SELECT rowid FROM chunks WHERE tenant_id=? AND document_id=? AND {where}",
                    (tenant_id, document_id, *params),
                )
            ]
            conn.executemany("UPDATE chunks SET effective_to=? WHERE rowid=?", [(end, r) for r in rowids])
            self._bump_generation(conn, tenant_id, rowids)
        return len(rowids)

    def forget_tenant(self, tenant_id: str) -> bool:
        """Drops this process's vector view of the tenant (the next query rebuilds it from the file)."""
        with self._cache_lock:
            return self._vector_cache.pop(tenant_id, None) is not None

    @staticmethod
    def _delete_rows(conn: sqlite3.Connection, rowids: list[int]) -> None:
        # Every derived artefact goes with the row: lexical, vector (same row) and scope entries.
        for table, column in (("chunks_fts", "rowid"), ("chunk_scopes", "chunk_rowid"), ("chunks", "rowid")):
            conn.executemany(f"DELETE FROM {table} WHERE {column}=?", [(r,) for r in rowids])

    @staticmethod
    def _bump_generation(conn: sqlite3.Connection, tenant_id: str, rowids: list[int]) -> None:
        """One new generation for this transaction, with the rows it touched (readers' vector views
        replay them)."""
        conn.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key='generation'")
        generation = int(conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])
        conn.executemany("INSERT INTO chunk_log VALUES (?, ?, ?)", [(generation, tenant_id, r) for r in rowids])
        if generation % 100 == 0 and generation > _LOG_KEEP:
            floor = generation - _LOG_KEEP
            conn.execute("DELETE FROM chunk_log WHERE generation <= ?", (floor,))
            conn.execute(
                "UPDATE meta SET value = ? WHERE key='log_floor' AND CAST(value AS INTEGER) < ?", (str(floor), floor)
            )

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
        if filters.exclude_document_ids:
            clauses.append(f"c.document_id NOT IN ({','.join('?' * len(filters.exclude_document_ids))})")
            params += list(filters.exclude_document_ids)
        return " AND ".join(clauses), params

    def bm25(self, tenant_id: str, query: str, filters: SearchFilters, top_k: int) -> list[SearchHit]:
        """FTS5's bm25 ranking. Once the tenant's view is built (warm_vectors, or a k-NN query), it is scored
        from the phrases' postings in the view's slots (fts_bm25: top k only, the filters as masks), with the
        same rows and scores as FTS5's own ranking (bm25_fts5, which answers until then)."""
        phrases = [tokens for tokens in map(fts_bm25.phrase_tokens, search_phrases(query)) if tokens]
        if not phrases:
            return []
        with self._cache_lock:
            built = tenant_id in self._vector_cache
        if not built:
            return self.bm25_fts5(tenant_id, query, filters, top_k)

        def rank(conn: sqlite3.Connection, view: "_VectorView", visible: set[str], as_of: str) -> tuple:
            postings = [fts_bm25.phrase_postings(conn, self._vocabulary, tokens) for tokens in phrases]
            return view.bm25(postings, fts_bm25.table_totals(conn), visible, as_of, filters, top_k)

        return self._ranked_from_view(tenant_id, filters, rank)

    def _ranked_from_view(
        self,
        tenant_id: str,
        filters: SearchFilters,
        rank: Callable[[sqlite3.Connection, "_VectorView", set[str], str], tuple[np.ndarray, np.ndarray]],
    ) -> list[SearchHit]:
        """The hits `rank` (row ids and scores from the tenant's view) picks, read in the same read transaction
        as the view's generation and everything `rank` reads, so all of it is one snapshot."""
        visible = set(visible_scopes(filters.access_scopes))
        as_of = "" if filters.include_superseded else (normalize_time(filters.as_of, "filters.as_of") or utc_now())
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            rowids, scores = rank(conn, self._vector_view(conn, tenant_id), visible, as_of)
            chosen = list(zip(rowids.tolist(), scores.tolist(), strict=True))
            by_rowid = {r["rowid"]: r for r in _select_rows(conn, _CHUNK_COLUMNS, tenant_id, rowids.tolist())}
        finally:
            conn.execute("COMMIT")
        # Belt and braces: every hit is re-checked against the filters on the row as stored.
        # Each hit's chunk is built when read: fusion keeps only the top k of the two lists.
        return [
            SearchHit.deferred(row["chunk_id"], score, functools.partial(_row_to_chunk, row))
            for r, score in chosen
            if (row := by_rowid.get(r)) is not None and _row_passes(row, visible, as_of, filters)
        ]

    def bm25_fts5(self, tenant_id: str, query: str, filters: SearchFilters, top_k: int) -> list[SearchHit]:
        """BM25 ranked by FTS5 itself (bm25() of every match, then ORDER BY ... LIMIT): the reference the
        view's ranking is tested against, and the answer before the tenant's view is built."""
        expression = fts_query(query)
        if not expression:
            return []
        where, params = self._filter_sql(tenant_id, filters)
        # Rank on the filter columns alone (they sit at the start of a row), then read whole rows for
        # the top k only: sorting every match with its text and embedding costs more than the ranking.
        rows = (
            self._conn()
            .execute(
                f"SELECT {_CHUNK_COLUMNS}, top.score FROM (SELECT chunks_fts.rowid AS hit, bm25(chunks_fts) AS score "
                f"FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ? AND {where} "
                f"ORDER BY score LIMIT ?) AS top JOIN chunks c ON c.rowid = top.hit ORDER BY top.score",
                [expression, *params, top_k],
            )
            .fetchall()
        )
        # FTS5's bm25() is negative (lower is better); report the conventional positive score.
        return [SearchHit(chunk=_row_to_chunk(r), score=-float(r["score"])) for r in rows]

    def _vector_view(self, conn: sqlite3.Connection, tenant_id: str) -> "_VectorView":
        """The tenant's view at the generation of `conn`'s open read transaction, or newer."""
        # purge: the generation of the tenant's last erasure; a view older than it reloads in full, so
        # erased vectors do not linger in dead slots.
        generation, floor, purge = (
            int(v or 0)
            for v in conn.execute(
                "SELECT (SELECT value FROM meta WHERE key='generation'), "
                "(SELECT value FROM meta WHERE key='log_floor'), (SELECT value FROM meta WHERE key='purge:' || ?)",
                (tenant_id,),
            ).fetchone()
        )
        with self._cache_lock:
            tenant_lock = self._tenant_locks.setdefault(tenant_id, threading.Lock())
        # One tenant's (re)load never holds up another tenant's queries.
        with tenant_lock:
            view = self._vector_cache.get(tenant_id)
            if view is not None and view.generation < generation:
                changed = None
                if view.generation >= max(floor, purge):
                    changed = [
                        r[0]
                        for r in conn.execute(
                            "SELECT DISTINCT chunk_rowid FROM chunk_log WHERE tenant_id=? AND generation > ? "
                            "AND generation <= ?",
                            (tenant_id, view.generation, generation),
                        )
                    ]
                if changed is not None and len(changed) <= max(_RELOAD_SHARE * view.live, 1000) and not view.worn:
                    view.apply(changed, _fetch_vector_rows(conn, tenant_id, changed), generation)
                else:
                    view = None
            if view is None:
                view = _VectorView(tenant_id)
                view.apply([], _fetch_vector_rows(conn, tenant_id, None), generation)
                with self._cache_lock:
                    self._vector_cache[tenant_id] = view
            return view

    def warm_vectors(self) -> threading.Thread:
        """Build every tenant's vector view in a background thread (a reader calls this at start-up,
        so the first query of a large tenant does not pay for it; a query meanwhile waits for the
        build it needs)."""

        def build() -> None:
            conn = self._conn()
            tenants = [r[0] for r in conn.execute("SELECT DISTINCT tenant_id FROM chunks")]
            for tenant_id in tenants:
                conn.execute("BEGIN")
                try:
                    self._vector_view(conn, tenant_id)
                finally:
                    conn.execute("COMMIT")

        thread = threading.Thread(target=build, name="embedded-index-warm", daemon=True)
        thread.start()
        return thread

    def knn(self, tenant_id, vector, model_id, filters, top_k) -> list[SearchHit]:
        _limit_blas_threads()
        query = np.asarray(vector, dtype=np.float32).ravel()

        def rank(conn: sqlite3.Connection, view: "_VectorView", visible: set[str], as_of: str) -> tuple:
            stored_models = view.model_ids
            if stored_models and stored_models != [model_id]:
                raise FailedPrecondition(
                    f"embedding model mismatch for tenant {tenant_id!r}: the index holds vectors of "
                    f"{stored_models}, the query was embedded with {model_id!r}; re-embed or switch models"
                )
            return view.search(query, visible, as_of, filters, top_k)

        return self._ranked_from_view(tenant_id, filters, rank)

    def _model_ids(self, tenant_id: str) -> list[str]:
        rows = self._conn().execute("SELECT DISTINCT embedding_model_id FROM chunks WHERE tenant_id=?", (tenant_id,))
        return [r[0] for r in rows]

    def vector_memory_bytes(self) -> int:
        """Bytes the in-memory vector views of every cached tenant hold (the benchmark reports it)."""
        with self._cache_lock:
            views = list(self._vector_cache.values())
        return sum(v.nbytes() for v in views)

    def get_chunk(self, tenant_id: str, chunk_id: str, access_scopes: list[str]) -> Chunk | None:
        scopes = visible_scopes(access_scopes)
        row = (
            self._conn()
            .execute(
                "SELECT c.* FROM chunks c WHERE c.tenant_id=? AND c.chunk_id=? AND EXISTS (SELECT 1 FROM "
                f"chunk_scopes s WHERE s.chunk_rowid=c.rowid AND s.scope IN ({','.join('?' * len(scopes))}))",
                [tenant_id, chunk_id, *scopes],
            )
            .fetchone()
        )
        return _row_to_chunk(row) if row else None

    def refresh(self) -> None:
        """Nothing to do: a committed write is visible to every reader at once."""

    def bulk_add(self, documents: Iterable[DocumentVersion], model_id: str) -> int:
        """Each document version in its own transaction, as replace_document_version writes it (a copy
        run twice stores the same rows)."""
        stored = 0
        for meta, chunks, vectors in documents:
            result = self.replace_document_version(meta, chunks, vectors, model_id)
            stored += result.written + result.unchanged
        return stored

    def export(self, tenant_id: str) -> Iterator[DocumentVersion]:
        """Every stored document version of a tenant as (meta, chunks, vectors by chunk id), for
        moving an index to another backend without re-embedding."""
        rows = self._conn().execute(
            "SELECT c.* FROM chunks c WHERE c.tenant_id=? ORDER BY document_id, version, position", (tenant_id,)
        )
        key: tuple[str, str] | None = None
        chunks: list[Chunk] = []
        vectors: dict[str, np.ndarray] = {}
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
        tenant_id=row["tenant_id"],
        document_id=row["document_id"],
        version=row["version"],
        access_scopes=json.loads(row["access_scopes"]),
        effective_from=row["effective_from"],
        effective_to=row["effective_to"],
        source_uri=row["source_uri"],
        content_type=row["content_type"],
        title=row["title"],
        source_sha256=row["source_sha256"],
    )
    return Chunk(
        chunk_id=row["chunk_id"],
        meta=meta,
        heading_path=json.loads(row["heading_path"]),
        body=row["body"],
        embed_text=row["embed_text"],
        char_start=row["char_start"],
        char_end=row["char_end"],
        parent_section_id=row["parent_section_id"],
        token_count=row["token_count"],
        position=row["position"],
        section_text=row["section_text"],
        embedding_model_id=row["embedding_model_id"],
        views=_row_views(row),
    )


def _view_values(chunk: Chunk) -> tuple:
    """The view columns' values for a chunk (empty ones when it carries no view vectors)."""
    views = chunk.views
    if views is None:
        return "", "", 0, "[]", None
    return views.model_id, views.dtype, views.dim, json.dumps(views.units), views.vectors


def _row_views(row: sqlite3.Row) -> ViewVectors | None:
    """The row's stored view vectors, or None (none stored, or a query that did not read them)."""
    if "view_vectors" not in row.keys() or not row["view_model_id"] or row["view_vectors"] is None:
        return None
    return ViewVectors(
        model_id=row["view_model_id"],
        dim=row["view_dim"],
        units=json.loads(row["view_units"]),
        vectors=bytes(row["view_vectors"]),
        dtype=row["view_dtype"],
    )


# ---- the in-memory vector view of one tenant ---------------------------------------------------

# Every column _row_to_chunk reads (never the embedding: a 384-d one spills to an overflow page).
_CHUNK_COLUMNS = (
    "c.rowid, chunk_id, tenant_id, document_id, version, effective_from, effective_to, access_scopes, "
    "source_uri, content_type, title, source_sha256, heading_path, body, embed_text, char_start, "
    "char_end, parent_section_id, section_text, token_count, position, embedding_model_id, "
    "view_model_id, view_dtype, view_dim, view_units, view_vectors"
)
# ...and the row's token count in FTS5 (its docsize record), BM25's document length.
_VECTOR_COLUMNS = (
    "c.rowid, embedding, effective_from, effective_to, access_scopes, document_id, content_type, embedding_model_id, "
    "(SELECT sz FROM chunks_fts_docsize d WHERE d.id = c.rowid)"
)


def _fetch_vector_rows(conn: sqlite3.Connection, tenant_id: str, rowids: list[int] | None) -> list:
    """The view's columns for the tenant's rows (all of them with `rowids` None); rows that no
    longer exist are simply absent."""
    if rowids is None:
        return conn.execute(f"SELECT {_VECTOR_COLUMNS} FROM chunks c WHERE tenant_id=?", (tenant_id,)).fetchall()
    return _select_rows(conn, _VECTOR_COLUMNS, tenant_id, rowids)


def _select_rows(conn: sqlite3.Connection, columns: str, tenant_id: str, rowids: list[int]) -> list:
    rows = []
    for start in range(0, len(rowids), _PARAMS_PER_QUERY):
        part = rowids[start : start + _PARAMS_PER_QUERY]
        # "+": the tenant is checked on each row, never looked up through chunks_doc (SQLite would
        # otherwise walk the tenant's whole index range to find a few row ids).
        rows += conn.execute(
            f"SELECT {columns} FROM chunks c WHERE +c.tenant_id=? AND c.rowid IN ({','.join('?' * len(part))})",
            [tenant_id, *part],
        ).fetchall()
    return rows


class _Codes:
    """Strings (or frozensets) -> small integer codes, so a filter is a lookup table over codes."""

    def __init__(self):
        self.code: dict = {}
        self.values: list = []

    def __call__(self, value) -> int:
        code = self.code.get(value)
        if code is None:
            code = self.code[value] = len(self.values)
            self.values.append(value)
        return code

    def table(self, wanted) -> np.ndarray:
        lut = np.zeros(max(len(self.values), 1), dtype=bool)
        for value in wanted:
            code = self.code.get(value)
            if code is not None:
                lut[code] = True
        return lut


def _epoch(text: str) -> int:
    """'YYYY-MM-DDTHH:MM:SSZ' (normalize_time's form, which sorts as text does) as seconds."""
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


class _Float32Scan:
    """Exact scores: the vectors as one float32 matrix (1.5 KiB a 384-d row), one matrix-vector
    product per query. Always kept: the 8-bit scan's candidates are rescored from it."""

    def __init__(self, dim: int):
        self.dim = dim
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self.n = 0

    def add(self, vectors: np.ndarray) -> None:
        need = self.n + len(vectors)
        if need > len(self.matrix):
            grown = np.zeros((max(need, int(len(self.matrix) * 1.25) + 16), self.dim), dtype=np.float32)
            grown[: self.n] = self.matrix[: self.n]
            self.matrix = grown
        self.matrix[self.n : need] = vectors
        self.n = need

    def keep(self, slots: np.ndarray) -> None:
        self.matrix = np.ascontiguousarray(self.matrix[slots])
        self.n = len(slots)

    def top(self, query: np.ndarray, mask: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(slots, exact scores) of the best `count` slots the mask lets through, unordered."""
        slots = np.flatnonzero(mask)
        if len(slots) < 0.3 * self.n:  # few visible rows: score only those
            scores = self.matrix[slots] @ query
        else:
            scores = (self.matrix[: self.n] @ query)[slots]
        if count < len(scores):
            best = np.argpartition(-scores, count - 1)[:count]
            return slots[best], scores[best]
        return slots, scores

    def rescore(self, query: np.ndarray, slots: np.ndarray) -> np.ndarray:
        return self.matrix[slots] @ query

    def nbytes(self) -> int:
        return self.matrix.nbytes


class _FaissCodes:
    """What the 8-bit and 1-bit scans share: a faiss index of per-slot codes in slot order, compacted with
    the view, searched under a bitmap of the visible slots."""

    index: Any
    n: int

    def __init__(self) -> None:
        import faiss

        self.faiss = faiss

    def keep(self, slots: np.ndarray) -> None:
        gone = np.setdiff1d(np.arange(self.n, dtype=np.int64), slots)
        self.index.remove_ids(self.faiss.IDSelectorBatch(gone))  # keeps the order of the rest
        self.n = len(slots)

    def _search(self, query: np.ndarray, mask: np.ndarray, count: int) -> np.ndarray:
        """Slots of the `count` best codes for the (encoded) query that the mask lets through, unordered."""
        bitmap = np.packbits(mask[: self.n], bitorder="little")
        selector = self.faiss.IDSelectorBitmap(self.n, self.faiss.swig_ptr(bitmap))
        params = self.faiss.SearchParameters(sel=selector)  # type: ignore[call-arg]  # kwargs added by faiss's wrapper
        _, slots = self.index.search(query[None, :], count, params=params)
        slots = slots[0]
        return slots[slots >= 0]

    def nbytes(self) -> int:
        return self.n * self.index.code_size


class _Sq8Scan(_FaissCodes):
    """Approximate scores from 8-bit codes (faiss's uniform scalar quantizer: a quarter of float32's
    bytes and memory traffic), filtered inside the scan by a bitmap of the visible slots; the view
    rescores the best `count` exactly from its float32 matrix. The quantizer's range is fitted on the
    rows of the view's first load (values outside it are clipped; the exact rescoring absorbs that, and
    the view reloads, refitting, when it has grown well past those rows)."""

    def __init__(self, dim: int):
        super().__init__()
        self.index = self.faiss.IndexScalarQuantizer(
            dim, self.faiss.ScalarQuantizer.QT_8bit_uniform, self.faiss.METRIC_INNER_PRODUCT
        )
        self.n = 0

    def add(self, vectors: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if not self.index.is_trained:
            self.index.train(vectors)
        self.index.add(vectors)
        self.n += len(vectors)

    def top(self, query: np.ndarray, mask: np.ndarray, count: int) -> np.ndarray:
        """Slots of the best `count` (by 8-bit score) that the mask lets through, unordered."""
        return self._search(query, mask, count)


class _BinaryScan(_FaissCodes):
    """A coarse first pass: one sign bit a dimension (48 bytes a 384-d row, a thirty-second of float32's),
    Hamming distances in faiss's IndexBinaryFlat, filtered inside the scan by a bitmap of the visible slots;
    the view rescores the best `count` exactly from its float32 matrix. The rows are centred on the mean of
    the view's first load (embeddings share a common direction, which would set most bits alike; a query's
    ranking is unchanged by it, q.x = q.(x - mean) + q.mean), the query is not."""

    def __init__(self, dim: int):
        super().__init__()
        self.index = self.faiss.IndexBinaryFlat(dim)
        # Counting selection rather than a heap for thousands of results.
        self.index.use_heap = False
        self.mean: np.ndarray | None = None
        self.n = 0

    def add(self, vectors: np.ndarray) -> None:
        if self.mean is None:
            self.mean = vectors.mean(axis=0, dtype=np.float64).astype(np.float32)
        self.index.add(np.packbits(vectors > self.mean, axis=1))
        self.n += len(vectors)

    def top(self, query: np.ndarray, mask: np.ndarray, count: int) -> np.ndarray:
        """Slots of the `count` nearest (in Hamming distance) that the mask lets through, unordered."""
        return self._search(np.packbits(query > 0), mask, count)


def _scan_kind() -> str:
    kind = config.mesh().index_knn
    if kind not in ("sq8", "exact"):
        raise ValueError(f"RAGMESH_INDEX_KNN={kind!r}: sq8 (8-bit scan, exact rescoring) or exact (float32)")
    if kind == "sq8":
        try:
            import faiss  # noqa: F401
        except ImportError:
            return "exact"
    return kind


class _VectorView:
    """One tenant's rows: float32 vectors and their 8-bit codes (slot order) plus SQLite row ids, a
    live flag and one code or time per filter field, as arrays. Replaced or deleted rows are marked
    dead (their slot never passes the mask again) and compacted away once they are a quarter of the
    slots. Every change and every scan runs under the view's lock (faiss must not scan while it appends)."""

    _COLUMNS = (
        ("rowids", np.int64),
        ("alive", bool),
        ("eff_from", np.int64),
        ("eff_to", np.int64),
        ("scopes", np.int32),
        ("docs", np.int32),
        ("types", np.int32),
        ("models", np.int32),
        ("doclen", np.int32),  # tokens in FTS5 (BM25's document length)
    )

    def __init__(self, tenant_id: str):
        self.tenant_id = tenant_id
        self.generation = -1
        self.dim = 0
        self.vectors: _Float32Scan | None = None
        self.sq8: _Sq8Scan | None = None
        self.binary: _BinaryScan | None = None  # with sq8: the first pass over many visible rows
        self.loaded = 0  # rows of the first load (the quantizer's fit)
        self.lock = threading.Lock()
        self.n = 0
        self.cols = {name: np.zeros(0, dtype=dtype) for name, dtype in self._COLUMNS}
        self.scope_codes, self.doc_codes, self.type_codes, self.model_codes = _Codes(), _Codes(), _Codes(), _Codes()
        self.position: dict[int, int] = {}
        self.live = 0
        self.model_ids: list[str] = []
        self._times: dict[str, int] = {}
        # Live row ids sorted, and their slots: maps a BM25 posting's row ids (the whole table's) to slots.
        self._sorted_rowids = np.zeros(0, dtype=np.int64)
        self._sorted_slots = np.zeros(0, dtype=np.int64)
        self._sorted_upto = 0  # slots [0, _sorted_upto) are in the sorted arrays (if alive then)

    @property
    def worn(self) -> bool:
        """Grown far past the rows its quantizer was fitted on: reloading refits it."""
        return self.sq8 is not None and self.live > 2 * self.loaded + 1000

    # -- maintenance (under the tenant's lock in the index) --

    def apply(self, changed: list[int], rows: list, generation: int) -> None:
        """Kill the slots of every changed row id, then append the rows as they now are."""
        with self.lock:
            alive = self.cols["alive"]
            for rowid in changed:
                slot = self.position.pop(rowid, None)
                if slot is not None and alive[slot]:
                    alive[slot] = False
                    self.live -= 1
            if rows:
                self._append(rows)
            if self.n and self.n - self.live > _COMPACT_SHARE * self.n:
                self._compact()
            n, cols = self.n, self.cols
            live_models = np.unique(cols["models"][:n][cols["alive"][:n]])
            self.model_ids = sorted(self.model_codes.values[c] for c in live_models)
            if self.generation < 0:
                self.loaded = self.live
            self.generation = generation

    def _append(self, rows: list) -> None:
        n, cols = self.n, self.cols
        if self.dim == 0:
            self.dim = len(rows[0][1]) // 4
            self.vectors = _Float32Scan(self.dim)
            self.sq8 = _Sq8Scan(self.dim) if _scan_kind() == "sq8" else None
            self.binary = _BinaryScan(self.dim) if self.sq8 is not None else None
        need = n + len(rows)
        if need > len(cols["rowids"]):
            capacity = max(need, int(len(cols["rowids"]) * 1.25) + 16)
            for name, column in list(cols.items()):
                grown = np.zeros(capacity, dtype=column.dtype)
                grown[:n] = column[:n]
                cols[name] = grown
        lo, hi = n, need
        cols["rowids"][lo:hi] = [r[0] for r in rows]
        width = self.dim * 4
        # A vector of another dimension (another model) is stored as zeros: the model check refuses first.
        blob = b"".join(r[1] if len(r[1]) == width else bytes(width) for r in rows)
        vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), self.dim)
        assert self.vectors is not None  # made when the view is first loaded
        self.vectors.add(vectors)
        if self.sq8 is not None:
            self.sq8.add(vectors)
        if self.binary is not None:
            self.binary.add(vectors)
        cols["eff_from"][lo:hi] = [self._time(r[2], -_FOREVER) for r in rows]
        cols["eff_to"][lo:hi] = [self._time(r[3], _FOREVER) for r in rows]
        scope_sets: dict[str, int] = {}  # the JSON text of a scope list -> its code, parsed once
        cols["scopes"][lo:hi] = [
            scope_sets.get(r[4])
            if r[4] in scope_sets
            else scope_sets.setdefault(r[4], self.scope_codes(frozenset(json.loads(r[4]))))
            for r in rows
        ]
        cols["docs"][lo:hi] = [self.doc_codes(r[5]) for r in rows]
        cols["types"][lo:hi] = [self.type_codes(r[6]) for r in rows]
        cols["models"][lo:hi] = [self.model_codes(r[7]) for r in rows]
        cols["doclen"][lo:hi] = [fts_bm25.docsize(r[8]) for r in rows]
        cols["alive"][lo:hi] = True
        for slot, rowid in enumerate(cols["rowids"][lo:hi].tolist(), start=lo):
            self.position[rowid] = slot
        self.live += len(rows)
        self.n = hi

    def _time(self, text: str, empty: int) -> int:
        if not text:
            return empty
        value = self._times.get(text)
        if value is None:
            value = self._times[text] = _epoch(text)
        return value

    def _compact(self) -> None:
        keep = np.flatnonzero(self.cols["alive"][: self.n])
        assert self.vectors is not None  # made when the view is first loaded
        self.vectors.keep(keep)
        if self.sq8 is not None:
            self.sq8.keep(keep)
        if self.binary is not None:
            self.binary.keep(keep)
        self.cols = {name: np.ascontiguousarray(column[keep]) for name, column in self.cols.items()}
        self.position = {rowid: slot for slot, rowid in enumerate(self.cols["rowids"].tolist())}
        self.n = len(keep)
        self._sorted_upto = 0  # slots moved: the sorted map is rebuilt on the next BM25 query
        self._sorted_rowids = self._sorted_slots = np.zeros(0, dtype=np.int64)

    def nbytes(self) -> int:
        """The scan's vectors, the arrays, the row-id -> slot map (about 100 bytes an entry) and BM25's sorted one."""
        with self.lock:
            arrays = sum(column.nbytes for column in self.cols.values())
            arrays += self._sorted_rowids.nbytes + self._sorted_slots.nbytes
            scans = sum(scan.nbytes() for scan in (self.vectors, self.sq8, self.binary) if scan is not None)
            return scans + arrays + 100 * len(self.position)

    # -- queries (any thread) --

    def search(
        self, query: np.ndarray, visible: set[str], as_of: str, filters: SearchFilters, top_k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """(row ids, exact scores) of the top_k rows that pass the filters, best first. With the 8-bit
        scan, its best max(RESCORE_FACTOR top_k, RESCORE_MIN) are rescored exactly and the top_k of those
        kept; over BINARY_MIN_ROWS visible rows the 1-bit scan's best max(BINARY_FACTOR top_k, BINARY_MIN)."""
        with self.lock:
            n, cols = self.n, self.cols
            nothing = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
            if n == 0 or top_k <= 0:
                return nothing
            if query.shape[0] != self.dim:
                raise FailedPrecondition(f"query vector has {query.shape[0]} dimensions, the index {self.dim}")
            mask = self._mask(visible, as_of, filters)
            visible_rows = int(np.count_nonzero(mask))
            if visible_rows == 0:
                return nothing
            assert self.vectors is not None  # a view with rows has its vectors
            count = max(RESCORE_FACTOR * top_k, RESCORE_MIN)
            shortlist = max(BINARY_FACTOR * top_k, BINARY_MIN)
            if self.binary is not None and visible_rows >= max(BINARY_MIN_ROWS, 10 * shortlist):
                slots = self.binary.top(query, mask, shortlist)
                scores = self.vectors.rescore(query, slots)
            elif self.sq8 is not None and visible_rows > count:
                slots = self.sq8.top(query, mask, count)
                scores = self.vectors.rescore(query, slots)
            else:
                slots, scores = self.vectors.top(query, mask, top_k)
            order = np.argsort(-scores, kind="stable")[:top_k]
            return cols["rowids"][slots[order]], scores[order]

    def _mask(
        self, visible: set[str], as_of: str, filters: SearchFilters, slots: np.ndarray | None = None
    ) -> np.ndarray:
        """Which slots (live rows) pass every filter field: all slots, or only `slots` (under the lock)."""
        n, cols = self.n, self.cols

        def column(name: str) -> np.ndarray:
            return cols[name][:n] if slots is None else cols[name][slots]

        mask = column("alive").copy()
        scope_ok = np.array([bool(s & visible) for s in self.scope_codes.values] or [False], dtype=bool)
        mask &= scope_ok[column("scopes")]
        if as_of:
            t = _epoch(as_of)
            mask &= (column("eff_from") <= t) & (column("eff_to") > t)
        if filters.document_ids:
            mask &= self.doc_codes.table(filters.document_ids)[column("docs")]
        if filters.exclude_document_ids:
            mask &= ~self.doc_codes.table(filters.exclude_document_ids)[column("docs")]
        if filters.content_types:
            mask &= self.type_codes.table(filters.content_types)[column("types")]
        return mask

    def _slots_of(self, rowids: np.ndarray) -> np.ndarray:
        """The live slot of each row id (-1: not one of this view's live rows), through the sorted map,
        which is extended when rows were appended in row-id order and rebuilt otherwise (under the lock)."""
        n, cols = self.n, self.cols
        if self._sorted_upto < n:
            new = cols["rowids"][self._sorted_upto : n]
            last = self._sorted_rowids[-1] if len(self._sorted_rowids) else -1
            if self._sorted_upto and new[0] > last and bool(np.all(new[1:] > new[:-1])):
                self._sorted_rowids = np.concatenate((self._sorted_rowids, new))
                self._sorted_slots = np.concatenate((self._sorted_slots, np.arange(self._sorted_upto, n)))
            else:
                live = np.flatnonzero(cols["alive"][:n])
                order = np.argsort(cols["rowids"][live], kind="stable")
                self._sorted_rowids, self._sorted_slots = cols["rowids"][live][order], live[order]
            self._sorted_upto = n
        if len(self._sorted_rowids) == 0:
            return np.full(len(rowids), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self._sorted_rowids, rowids), len(self._sorted_rowids) - 1)
        slots = self._sorted_slots[at]
        found = (self._sorted_rowids[at] == rowids) & cols["alive"][slots]
        return np.where(found, slots, -1)

    def bm25(
        self,
        phrases: list[fts_bm25.PhrasePostings],
        totals: tuple[int, int],
        visible: set[str],
        as_of: str,
        filters: SearchFilters,
        top_k: int,
    ) -> tuple[np.ndarray, np.ndarray]:
        """(row ids, FTS5 bm25 scores, positive) of the top_k rows that pass the filters, best first, from
        each query phrase's postings over the whole table (fts_bm25; N and the tokens are the table's).
        The lock is held to narrow the postings to the visible rows; the scoring runs without it."""
        rows, tokens = totals
        if top_k <= 0 or rows <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        matches = []
        with self.lock:
            for phrase in phrases:
                slots = self._slots_of(phrase.rowids)
                keep = slots >= 0
                keep[keep] = self._mask(visible, as_of, filters, slots[keep])  # only the rows holding the phrase
                matches.append(
                    fts_bm25.Matches(
                        rowids=phrase.rowids[keep],
                        freqs=phrase.freqs[keep],
                        doclen=self.cols["doclen"][slots[keep]],
                        idf=fts_bm25.idf(rows, len(phrase.rowids)),
                    )
                )
        return fts_bm25.top_k(matches, tokens / rows, top_k)


def _row_passes(row: sqlite3.Row, visible: set[str], as_of: str, filters: SearchFilters) -> bool:
    if not visible & set(json.loads(row["access_scopes"])):
        return False
    if as_of and not (row["effective_from"] <= as_of and (row["effective_to"] == "" or row["effective_to"] > as_of)):
        return False
    if filters.document_ids and row["document_id"] not in filters.document_ids:
        return False
    if row["document_id"] in filters.exclude_document_ids:
        return False
    return not filters.content_types or row["content_type"] in filters.content_types


_BLAS_LIMITED = False
# OpenMP's thread count is a setting of the calling thread: one set in the main thread does not reach the gRPC
# and retriever pool threads that search, whose faiss calls then ran on every core, spinning between queries.
_OMP_LIMITED = threading.local()


def _limit_blas_threads() -> None:
    """Bound OpenBLAS (numpy's matrix-vector product, once per process) and faiss's OpenMP (once per calling
    thread) to RAGMESH_INDEX_BLAS_THREADS, default 1: on two shared cores a second thread fights torch /
    onnxruntime and the query's BM25, and a memory-bound scan of one query gains nothing from it."""
    global _BLAS_LIMITED
    if getattr(_OMP_LIMITED, "done", False):
        return
    _OMP_LIMITED.done = True
    threads = config.mesh().index_blas_threads
    if threads <= 0:
        return
    try:
        import faiss

        faiss.omp_set_num_threads(threads)  # faiss's own OpenMP runtime, for this thread
    except ImportError:
        pass
    if _BLAS_LIMITED:
        return
    _BLAS_LIMITED = True
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # scikit-learn brings it; without it numpy keeps its default
        return
    threadpool_limits(limits=threads, user_api="blas")
