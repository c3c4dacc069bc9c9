"""The embedded index's 1-bit first pass (shared/index/embedded.py, _BinaryScan) on a real SQLite index:
recall against exact search over the rows the filters let through, the masks honoured inside the scan,
the fallback to the 8-bit scan for few visible rows, and its codes kept in step with the view's slots
through deletes, compaction and erasure (no erased row's code or vector left in the view). The thresholds
are lowered so that ten thousand rows take the path a million take in production."""

import faiss
import numpy as np
import pytest

from shared.index import embedded
from shared.index.embedded import EmbeddedIndex
from shared.model import SearchFilters
from tests.conformance.index_suite import MODEL_ID, chunk, meta

DIM, LATENT, DOCS, PER_DOC, K = 128, 12, 1000, 10, 20
PUBLIC = SearchFilters(access_scopes=["public"])


def _low_rank(rng: np.random.Generator, projection: np.ndarray, offset: np.ndarray, n: int) -> np.ndarray:
    """Vectors like sentence embeddings: a low-dimensional latent space, a shared direction, a little noise."""
    x = rng.normal(size=(n, LATENT)).astype(np.float32) @ projection + offset
    x += 0.3 * rng.normal(size=(n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMESH_INDEX_KNN", "sq8")
    monkeypatch.setattr(embedded, "BINARY_MIN_ROWS", 3000)
    monkeypatch.setattr(embedded, "BINARY_FACTOR", 20)
    monkeypatch.setattr(embedded, "BINARY_MIN", 100)
    calls = {"binary": 0}
    real_top = embedded._BinaryScan.top

    def counted_top(self, query, mask, count):
        calls["binary"] += 1
        return real_top(self, query, mask, count)

    monkeypatch.setattr(embedded._BinaryScan, "top", counted_top)
    index = EmbeddedIndex(str(tmp_path / "index.sqlite"))
    index.warm_up()
    rng = np.random.default_rng(5)
    projection = rng.normal(size=(LATENT, DIM)).astype(np.float32)
    offset = 2.0 * rng.normal(size=DIM).astype(np.float32) / np.sqrt(DIM)
    rows = {}
    for d in range(DOCS):
        m = meta(doc=f"d{d}", scopes=("public",) if d % 3 else ("hr",))
        vectors = _low_rank(rng, projection, offset, PER_DOC)
        chunks = [chunk(m, i, f"d{d} c{i}") for i in range(PER_DOC)]
        index.replace_document_version(
            m, chunks, {c.chunk_id: v for c, v in zip(chunks, vectors, strict=True)}, MODEL_ID
        )
        rows.update({c.chunk_id: (d, v) for c, v in zip(chunks, vectors, strict=True)})
    queries = _low_rank(rng, projection, offset, 30)
    return index, rows, queries, calls


def _recall(index, rows, queries, filters: SearchFilters, allowed) -> float:
    ids = [cid for cid, (d, _) in rows.items() if allowed(d)]
    matrix = np.stack([rows[cid][1] for cid in ids])
    recalls = []
    for query in queries:
        truth = {ids[i] for i in np.argsort(-(matrix @ query))[:K]}
        hits = index.knn("acme", query, MODEL_ID, filters, K)
        assert all(allowed(rows[h.chunk.chunk_id][0]) for h in hits), "a hit the filters exclude"
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
        recalls.append(len(truth & {h.chunk.chunk_id for h in hits}) / K)
    return float(np.mean(recalls))


def _view(index):
    return index._vector_cache["acme"]


def _assert_codes_match_live_slots(view) -> None:
    """The 1-bit codes are exactly those of the view's float32 rows, slot for slot."""
    binary, n = view.binary, view.n
    assert binary is not None and binary.n == view.vectors.n == n
    codes = faiss.vector_to_array(binary.index.xb).reshape(n, binary.index.code_size)
    assert np.array_equal(codes, np.packbits(view.vectors.matrix[:n] > binary.mean, axis=1))


def test_binary_pass_recall_against_exact_under_filters(corpus):
    index, rows, queries, calls = corpus
    public = lambda d: d % 3 != 0  # noqa: E731
    assert _recall(index, rows, queries, PUBLIC, public) >= 0.98
    assert calls["binary"] == len(queries), "the 1-bit pass was not taken"
    # Documents filter inside the query: a large set still goes through the 1-bit pass.
    wanted = {f"d{d}" for d in range(DOCS) if d % 5}  # four fifths of the public rows
    some = SearchFilters(access_scopes=["public"], document_ids=sorted(wanted))
    assert _recall(index, rows, queries, some, lambda d: public(d) and f"d{d}" in wanted) >= 0.98
    assert calls["binary"] == 2 * len(queries)


def test_few_visible_rows_fall_back_to_the_8_bit_scan(corpus):
    index, rows, queries, calls = corpus
    wanted = {f"d{d}" for d in range(1, 300, 3)}  # 1000 rows: under the lowered threshold
    some = SearchFilters(access_scopes=["public"], document_ids=sorted(wanted))
    assert _recall(index, rows, queries, some, lambda d: f"d{d}" in wanted) >= 0.98
    assert calls["binary"] == 0


def test_codes_follow_deletes_compaction_and_erasure(corpus):
    index, rows, queries, _ = corpus
    index.knn("acme", queries[0], MODEL_ID, PUBLIC, K)
    _assert_codes_match_live_slots(_view(index))
    # Over a quarter of the rows deleted: the view compacts its slots, the 1-bit codes with them.
    gone = {d for d in range(1, DOCS, 3)} | {d for d in range(2, DOCS, 6)}
    for d in sorted(gone):
        index.delete_document("acme", f"d{d}")
    kept = {cid: r for cid, r in rows.items() if r[0] not in gone}
    assert _recall(index, kept, queries, PUBLIC, lambda d: d % 3 != 0) >= 0.98
    view = _view(index)
    assert view.n == view.live  # compacted
    _assert_codes_match_live_slots(view)
    # Erasure: the reloaded view holds neither the erased rows' vectors nor their codes.
    erased = 5
    erased_vectors = np.stack([v for d, v in kept.values() if d == erased])
    index.erase("acme", f"d{erased}")
    hits = index.knn("acme", erased_vectors[0], MODEL_ID, PUBLIC, K)
    assert all(kept[h.chunk.chunk_id][0] != erased for h in hits)
    view = _view(index)
    _assert_codes_match_live_slots(view)
    live = view.vectors.matrix[: view.n]
    assert not any(np.any(np.all(live == v, axis=1)) for v in erased_vectors)
