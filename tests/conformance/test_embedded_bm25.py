"""The embedded index's BM25 from the tenant's view (shared/index/fts_bm25.py) against FTS5's own ranking.

FTS5 (`EmbeddedIndex.bm25_fts5`: bm25() of every match, ORDER BY ... LIMIT) is the reference: through random
writes from this and another process, deletes, supersession, erasure and other tenants' writes (which move
N, avgdl and the idf), every query under every filter returns the same rows with the same scores.
"""

import numpy as np
import pytest

from shared.index import fts_bm25
from shared.index.embedded import EmbeddedIndex
from shared.model import SearchFilters
from tests.conformance.index_suite import MODEL_ID, IndexConformance, meta, unit, write
from tests.conformance.isolation import IsolationConformance
from tests.conformance.test_embedded_index import _in_another_process

ANY = SearchFilters()
# Stems (porter), case, diacritics, hyphens and underscores (several-token phrases), repeats.
WORDS = (
    "refund refunds refunding Refunded invoice invoices billing bill café cafe naïve E-4412 e-4412 a_b "
    "policy policies the of and leave leaving annual sync syncing Kestrelwood x y z alpha beta gamma 42"
).split()
FILTERS = [
    ANY,
    SearchFilters(access_scopes=["hr"]),
    SearchFilters(as_of="2021-06-01"),
    SearchFilters(include_superseded=True),
    SearchFilters(include_superseded=True, document_ids=["d1", "d3"]),
    SearchFilters(include_superseded=True, exclude_document_ids=["d1", "d3"]),
    SearchFilters(access_scopes=["finance"], content_types=["text/markdown"]),
    SearchFilters(content_types=["application/pdf"]),
]


class _ViewFirst(EmbeddedIndex):
    """Builds the tenant's view before BM25 (as warm_vectors does at a retriever's start), so the
    conformance suite runs on the view's ranking rather than on the FTS5 answer given until then."""

    def bm25(self, tenant_id, query, filters, top_k):
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            self._vector_view(conn, tenant_id)
        finally:
            conn.execute("COMMIT")
        return super().bm25(tenant_id, query, filters, top_k)


@pytest.fixture
def index(tmp_path):
    backend = _ViewFirst(str(tmp_path / "index.sqlite"))
    backend.warm_up()
    return backend


class TestEmbeddedIndexBm25FromView(IndexConformance, IsolationConformance):
    pass


def _same_ranking(got, want, context) -> None:
    """Same length, the same scores rank by rank (1e-6 relative), the same row at every rank whose score
    is not tied with another (ties may come in either order, or be cut at k either way)."""
    assert len(got) == len(want), context
    got_scores = np.array([h.score for h in got])
    want_scores = np.array([h.score for h in want])
    np.testing.assert_allclose(got_scores, want_scores, rtol=1e-6, err_msg=str(context))
    for rank, hit in enumerate(want):
        tied = np.isclose(want_scores, hit.score, rtol=1e-9, atol=0).sum() > 1
        tied_at_cut = np.isclose(hit.score, want_scores[-1], rtol=1e-9, atol=0)
        if not tied and not tied_at_cut:
            assert got[rank].chunk.chunk_id == hit.chunk.chunk_id, (context, rank)


def _query(rng) -> str:
    return " ".join(rng.choice(WORDS, size=rng.integers(1, 5)))


def _body(rng) -> str:
    return " ".join(rng.choice(WORDS, size=rng.integers(3, 25)))


def _compare(reader: EmbeddedIndex, rng, step) -> None:
    for _ in range(4):
        query = _query(rng)
        for f in FILTERS:
            for k in (3, 50):
                want = reader.bm25_fts5("acme", query, f, k)
                got = reader.bm25("acme", query, f, k)
                _same_ranking(got, want, (step, query, f, k))


def test_bm25_from_the_view_equals_fts5_through_random_writes(index):
    rng = np.random.default_rng(11)
    reader = EmbeddedIndex(index.path)
    reader.warm_up()
    write(index, meta(doc="d0"), [(_body(rng), unit(1))])
    reader.knn("acme", unit(1), MODEL_ID, ANY, 5)  # builds the view: bm25 now ranks from it
    view = reader._vector_cache["acme"]
    scopes = [("public",), ("hr",), ("hr", "finance")]
    for step in range(40):
        doc = f"d{rng.integers(0, 6)}"
        action = rng.random()
        if action < 0.15:
            index.delete_document("acme", doc)
        elif action < 0.25:
            index.close_document("acme", doc, ["2020-06-01", "2021-03-01", "2023-01-01"][rng.integers(0, 3)])
        elif action < 0.35:
            # Another tenant's rows move N, avgdl and every phrase's idf.
            write(index, meta(tenant="globex", doc=doc), [(_body(rng), unit(1)) for _ in range(rng.integers(1, 4))])
        elif action < 0.45:
            bodies = [_body(rng) for _ in range(rng.integers(1, 4))]
            _in_another_process(
                index.path,
                f"write(index, meta(doc={doc!r}, scopes=('hr',)), [(b, unit(1)) for b in {bodies!r}])",
            )
        else:
            m = meta(
                doc=doc,
                version=str(rng.integers(1, 3)),
                scopes=scopes[rng.integers(0, 3)],
                eff_from=["2020-01-01", "2021-01-01", "2022-01-01"][rng.integers(0, 3)],
            )
            write(index, m, [(_body(rng), unit(*rng.normal(size=4))) for _ in range(rng.integers(1, 5))])
        assert fts_bm25.table_totals(reader._conn())[0] == index.count_chunks()
        _compare(reader, rng, step)
    # Writes were applied to the one view from the log (no erasure happened, nothing reloaded it).
    assert reader._vector_cache["acme"] is view


def test_bm25_from_the_view_after_erasure_holds_nothing_erased(index):
    rng = np.random.default_rng(3)
    reader = EmbeddedIndex(index.path)
    reader.warm_up()
    for d in range(5):
        write(index, meta(doc=f"d{d}"), [(_body(rng), unit(1)) for _ in range(3)])
    write(index, meta(doc="secret"), [("Quillmarsh indemnity addendum refund", unit(1))])
    reader.knn("acme", unit(1), MODEL_ID, ANY, 5)
    assert [h.chunk.meta.document_id for h in reader.bm25("acme", "Quillmarsh", ANY, 5)] == ["secret"]
    erased = {r[0] for r in index._conn().execute("SELECT rowid FROM chunks WHERE document_id='secret'")}

    index.erase("acme", "secret")
    index.purge()

    assert reader.bm25("acme", "Quillmarsh indemnity", ANY, 5) == []
    view = reader._vector_cache["acme"]
    # The view was reloaded (not patched): no slot, live or dead, and no row-id map entry is an erased row.
    assert not erased & set(view.cols["rowids"][: view.n].tolist())
    assert not erased & set(view._sorted_rowids.tolist())
    _compare(reader, rng, "after erasure")


def test_the_postings_vocabulary_is_made_once_per_connection_even_before_the_index_exists(tmp_path):
    """BM25's postings vocabulary (a temp fts5vocab table) is made as a connection opens, never per query, and
    serves a connection opened before the index's tables existed, on a file another process made."""
    path = str(tmp_path / "index.sqlite")
    reader = EmbeddedIndex(path)
    conn = reader._conn()  # opened on an empty file
    _in_another_process(path, "write(index, meta(doc='d0'), [('refund policy refunds', unit(1))])")
    reader.knn("acme", unit(1), MODEL_ID, ANY, 5)  # builds the view: bm25 now ranks from it
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        for query in ("refund", "policy refund", "missing"):
            _same_ranking(reader.bm25("acme", query, ANY, 5), reader.bm25_fts5("acme", query, ANY, 5), query)
    finally:
        conn.set_trace_callback(None)
    assert [h.chunk.meta.document_id for h in reader.bm25("acme", "refunding", ANY, 5)] == ["d0"]
    assert statements and not [s for s in statements if "fts5vocab" in s]


def test_phrases_are_fts5s_tokens():
    assert fts_bm25.phrase_tokens("Refunding") == ("refund",)
    assert fts_bm25.phrase_tokens("E 4412") == ("e", "4412")
    assert fts_bm25.phrase_tokens("naïve") == ("naiv",)
    assert fts_bm25.phrase_tokens("_") == ()
