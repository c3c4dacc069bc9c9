import numpy as np
import pytest

from shared.index.embedded import EmbeddedIndex, fts_query
from shared.model import SearchFilters
from tests.conformance.index_suite import MODEL_ID, IndexConformance, ids
from tests.conformance.isolation import IsolationConformance


@pytest.fixture
def index(tmp_path):
    backend = EmbeddedIndex(str(tmp_path / "index.sqlite"))
    backend.warm_up()
    return backend


class TestEmbeddedIndex(IndexConformance, IsolationConformance):
    def test_a_second_process_view_sees_writes(self, index, tmp_path):
        """A reader (retriever replica) opened on the same file sees the writer's commits."""
        from tests.conformance.index_suite import meta, unit, write

        reader = EmbeddedIndex(index.path)
        reader.warm_up()
        assert reader.bm25("acme", "fresh", self.ANY, 5) == []
        write(index, meta(), [("fresh content", unit(1))])
        assert len(reader.bm25("acme", "fresh", self.ANY, 5)) == 1
        assert len(reader.knn("acme", unit(1), "test/model", self.ANY, 5)) == 1


def test_fts_query_quotes_every_term():
    assert fts_query('E-4412 "sync" OR x*') == '"E 4412" OR "sync" OR "OR" OR "x"'
    assert fts_query("!!! ???") == ""


# ---- the reader's in-memory vector view stays in step with the writer -----------------------------

ANY = SearchFilters()

_WRITER = """
import sys
import numpy as np
sys.path.insert(0, {root!r})
from shared.index.embedded import EmbeddedIndex
from tests.conformance.index_suite import meta, unit, write
index = EmbeddedIndex({path!r})
index.warm_up()
{body}
"""


def _in_another_process(path, body: str) -> None:
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    subprocess.run([sys.executable, "-c", _WRITER.format(root=root, path=path, body=body)], check=True, timeout=120)


def test_vector_view_follows_writes_and_deletes_of_another_process(index):
    from tests.conformance.index_suite import meta, unit, write

    reader = EmbeddedIndex(index.path)
    reader.warm_up()
    hr = SearchFilters(access_scopes=["hr"])
    write(index, meta(doc="a"), [("alpha", unit(1))])
    assert ids(reader.knn("acme", unit(1), MODEL_ID, ANY, 10)) == ["a"]
    view = reader._vector_cache["acme"]

    _in_another_process(
        index.path,
        "write(index, meta(doc='b'), [('beta', unit(1, 0.1))])\n"
        "write(index, meta(tenant='other', doc='x'), [('x', unit(1))])",
    )
    assert ids(reader.knn("acme", unit(1), MODEL_ID, ANY, 10)) == ["a", "b"]
    # Re-filed under a scope the caller lacks (same content: only the metadata changes), then deleted.
    _in_another_process(index.path, "write(index, meta(doc='a', scopes=('hr',)), [('alpha', unit(1))])")
    assert ids(reader.knn("acme", unit(1), MODEL_ID, ANY, 10)) == ["b"]
    assert ids(reader.knn("acme", unit(1), MODEL_ID, hr, 10)) == ["a", "b"]
    _in_another_process(index.path, "index.delete_document('acme', 'b')")
    assert ids(reader.knn("acme", unit(1), MODEL_ID, hr, 10)) == ["a"]
    assert ids(reader.knn("other", unit(1), MODEL_ID, hr, 10)) == ["x"]
    # Every step was applied to the same view from the log, not by reloading the tenant.
    assert reader._vector_cache["acme"] is view and view.live == 1


@pytest.mark.parametrize("scan", ["sq8", "exact"])
def test_vector_view_equals_a_fresh_load_through_random_writes(index, monkeypatch, scan):
    """Random replaces (new content, new scopes, new dates), deletes and queries from one writer
    connection; after every step the long-lived reader answers exactly as a fresh reader does."""
    from tests.conformance.index_suite import meta, unit, write

    monkeypatch.setenv("RAGMESH_INDEX_KNN", scan)
    rng = np.random.default_rng(5)
    reader = EmbeddedIndex(index.path)
    reader.warm_up()
    scopes = [("public",), ("hr",), ("hr", "finance")]
    filters = [
        ANY,
        SearchFilters(access_scopes=["hr"]),
        SearchFilters(as_of="2021-06-01"),
        SearchFilters(include_superseded=True, document_ids=["d1", "d3"]),
        SearchFilters(exclude_document_ids=["d2", "d4"]),
        SearchFilters(access_scopes=["finance"], content_types=["text/markdown"]),
    ]
    for step in range(60):
        doc = f"d{rng.integers(0, 6)}"
        if rng.random() < 0.2:
            index.delete_document("acme", doc)
        else:
            m = meta(
                doc=doc,
                version=str(rng.integers(1, 3)),
                scopes=scopes[rng.integers(0, 3)],
                eff_from=["2020-01-01", "2021-01-01", "2022-01-01"][rng.integers(0, 3)],
            )
            write(
                index,
                m,
                [
                    (f"{doc} body {rng.integers(0, 3)} {i}", unit(*rng.normal(size=4)))
                    for i in range(rng.integers(1, 5))
                ],
            )
        fresh = EmbeddedIndex(index.path)
        query = unit(*rng.normal(size=4))
        for f in filters:
            got = [(h.chunk.chunk_id, round(h.score, 5)) for h in reader.knn("acme", query, MODEL_ID, f, 7)]
            want = [(h.chunk.chunk_id, round(h.score, 5)) for h in fresh.knn("acme", query, MODEL_ID, f, 7)]
            assert got == want, (step, f)


def test_a_view_older_than_the_log_reloads(index, monkeypatch):
    """The writer prunes the log; a reader whose view predates what is left reloads the tenant."""
    import shared.index.embedded as embedded
    from tests.conformance.index_suite import meta, unit, write

    monkeypatch.setattr(embedded, "_LOG_KEEP", 5)
    reader = EmbeddedIndex(index.path)
    reader.warm_up()
    write(index, meta(doc="gone"), [("gone", unit(1))])
    assert ids(reader.knn("acme", unit(1), MODEL_ID, ANY, 10)) == ["gone"]
    stale = reader._vector_cache["acme"]
    index.delete_document("acme", "gone")
    for i in range(120):
        write(index, meta(doc=f"n{i % 3}"), [(f"new {i}", unit(0, 1, i))])
    floor = int(index._conn().execute("SELECT value FROM meta WHERE key='log_floor'").fetchone()[0])
    assert floor > stale.generation
    assert sorted(ids(reader.knn("acme", unit(1), MODEL_ID, ANY, 10))) == ["n0", "n1", "n2"]
    assert reader._vector_cache["acme"] is not stale


class TestEmbeddedIndexExactScan(IndexConformance):
    """The same suite on the float32 scan (RAGMESH_INDEX_KNN=exact, also the fallback without faiss).
    (Not the hypothesis isolation property: one @given test may run under one test class only.)"""

    @pytest.fixture
    def index(self, tmp_path, monkeypatch):
        monkeypatch.setenv("RAGMESH_INDEX_KNN", "exact")
        backend = EmbeddedIndex(str(tmp_path / "index.sqlite"))
        backend.warm_up()
        return backend


@pytest.mark.parametrize("scan", ["sq8", "exact"])
def test_knn_matches_exact_search_over_the_visible_rows(tmp_path, monkeypatch, scan):
    """Thousands of rows, so the 8-bit scan really chooses what gets rescored: the hits are the exact
    top k of the rows the filters let through (recall@20 against numpy over the same rows)."""
    from tests.conformance.index_suite import chunk, meta

    monkeypatch.setenv("RAGMESH_INDEX_KNN", scan)
    index = EmbeddedIndex(str(tmp_path / "index.sqlite"))
    index.warm_up()
    rng = np.random.default_rng(11)
    dim, rows = 48, []
    for d in range(300):
        m = meta(doc=f"d{d}", scopes=("public",) if d % 3 else ("hr",))
        vectors = rng.normal(size=(10, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        chunks = [chunk(m, i, f"d{d} c{i}") for i in range(10)]
        index.replace_document_version(
            m, chunks, {c.chunk_id: v for c, v in zip(chunks, vectors, strict=True)}, MODEL_ID
        )
        rows += [(c.chunk_id, d % 3 != 0, v) for c, v in zip(chunks, vectors, strict=True)]

    def recall(rows) -> float:
        public = [(cid, v) for cid, is_public, v in rows if is_public]
        matrix = np.stack([v for _, v in public])
        recalls = []
        for _ in range(20):
            query = rng.normal(size=dim).astype(np.float32)
            query /= np.linalg.norm(query)
            truth = {public[i][0] for i in np.argsort(-(matrix @ query))[:20]}
            hits = index.knn("acme", query, MODEL_ID, ANY, 20)
            assert all(h.chunk.meta.access_scopes == ["public"] for h in hits)
            assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
            recalls.append(len(truth & {h.chunk.chunk_id for h in hits}) / 20)
        return float(np.mean(recalls))

    assert recall(rows) >= (1.0 if scan == "exact" else 0.98)
    # A third of the documents deleted: the view compacts its slots (and the 8-bit codes with them).
    for d in range(0, 300, 3):
        index.delete_document("acme", f"d{d}")
    kept = [r for r in rows if int(r[0].split("-")[1][1:]) % 3]
    assert recall(kept) >= (1.0 if scan == "exact" else 0.98)


def test_reader_threads_query_while_the_writer_writes(index):
    """Queries on one reader from several threads (the retriever's pool) while another connection
    replaces and deletes documents: no errors, and every hit is the tenant's and visible to the caller."""
    import threading

    from tests.conformance.index_suite import chunk, meta

    rng = np.random.default_rng(3)

    def file(doc: str, scopes) -> None:
        m = meta(doc=doc, scopes=scopes)
        vectors = rng.normal(size=(40, 8)).astype(np.float32)
        chunks = [chunk(m, i, f"{doc} {i} {rng.integers(1 << 30)}") for i in range(40)]
        index.replace_document_version(
            m, chunks, dict(zip([c.chunk_id for c in chunks], vectors, strict=True)), MODEL_ID
        )

    for d in range(10):  # 400 rows: the 8-bit scan really runs
        file(f"d{d}", ("public",))
    file("secret", ("hr",))
    reader = EmbeddedIndex(index.path)
    reader.warm_up()
    errors, stop = [], threading.Event()

    def query() -> None:
        while not stop.is_set():
            try:
                for hit in reader.knn("acme", rng.normal(size=8).astype(np.float32), MODEL_ID, ANY, 20):
                    assert hit.chunk.meta.tenant_id == "acme" and hit.chunk.meta.access_scopes == ["public"]
            except Exception as exc:  # noqa: BLE001 - collected and re-raised below
                errors.append(exc)
                return

    threads = [threading.Thread(target=query) for _ in range(3)]
    for t in threads:
        t.start()
    for step in range(30):
        if step % 5 == 4:
            index.delete_document("acme", f"d{step % 10}")
        file(f"d{step % 10}", ("public",) if step % 3 else ("hr",))
    stop.set()
    for t in threads:
        t.join()
    assert errors == []


def test_warm_vectors_builds_every_tenants_view(index):
    from tests.conformance.index_suite import meta, unit, write

    write(index, meta(tenant="a"), [("one", unit(1))])
    write(index, meta(tenant="b"), [("two", unit(0, 1))])
    reader = EmbeddedIndex(index.path)
    reader.warm_up()
    reader.warm_vectors().join(timeout=30)
    assert sorted(reader._vector_cache) == ["a", "b"]
    assert ids(reader.knn("b", unit(0, 1), MODEL_ID, ANY, 5)) == ["doc-1"]


def test_knn_bounds_faiss_threads_in_every_searching_thread(index, monkeypatch):
    """OpenMP's thread count belongs to the calling thread: each thread that searches (the gRPC pool's, the
    retriever's) must be bounded itself, or faiss runs on every core and its idle threads spin between queries."""
    import threading

    import faiss

    from tests.conformance.index_suite import meta, unit, write

    monkeypatch.setenv("RAGMESH_INDEX_BLAS_THREADS", "1")
    write(index, meta(), [("some content", unit(1))])
    faiss.omp_set_num_threads(1)  # the main thread's own setting must not be what the other threads see
    seen = []

    def search():
        index.knn("acme", unit(1), "test/model", ANY, 5)
        seen.append(faiss.omp_get_max_threads())

    for _ in range(2):
        thread = threading.Thread(target=search)
        thread.start()
        thread.join()
    assert seen == [1, 1]
