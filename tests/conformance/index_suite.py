"""One conformance suite for every index backend (Haystack's DocumentStore tests are the model).

A backend's test module subclasses `IndexConformance` and provides an `index` fixture returning a
fresh, warmed-up backend. Vectors are synthetic unit vectors: the suite tests the index, not a model.
"""

import zlib

import numpy as np
import pytest

from shared.embedding.views import pack, unpack
from shared.errors import Aborted, FailedPrecondition, InvalidArgument
from shared.index import opensearch as opensearch_backend
from shared.index.listing import list_page
from shared.model import Chunk, DocumentMeta, SearchFilters, ViewVectors

MODEL_ID = "test/model"
DIM = 8


def unit(*values) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def meta(tenant="acme", doc="doc-1", version="1", scopes=("public",), eff_from="2020-01-01", eff_to="") -> DocumentMeta:
    return DocumentMeta(
        tenant_id=tenant,
        document_id=doc,
        version=version,
        access_scopes=list(scopes),
        effective_from=eff_from,
        effective_to=eff_to,
        source_uri=f"{doc}.md",
        content_type="text/markdown",
        title=doc,
    )


def chunk(m: DocumentMeta, position: int, body: str) -> Chunk:
    return Chunk(
        chunk_id=f"{m.tenant_id}-{m.document_id}-{m.version}-{position}-{abs(hash(body)) % 10**8}",
        meta=m,
        heading_path=["Section"],
        body=body,
        embed_text=f"Section\n{body}",
        char_start=0,
        char_end=len(body),
        parent_section_id="sec",
        token_count=10,
        position=position,
        section_text=body,
    )


def write(index, m: DocumentMeta, bodies_and_vectors: list[tuple[str, np.ndarray]]):
    chunks = [chunk(m, i, body) for i, (body, _) in enumerate(bodies_and_vectors)]
    existing = index.existing_chunk_ids(m, MODEL_ID)
    vectors = {
        c.chunk_id: v for c, (_, v) in zip(chunks, bodies_and_vectors, strict=True) if c.chunk_id not in existing
    }
    return index.replace_document_version(m, chunks, vectors, MODEL_ID)


def views_for(chunk_id: str, count: int = 3) -> ViewVectors:
    """Synthetic view vectors for a chunk (unit rows, a title view and one per unit), distinct per chunk id."""
    rng = np.random.default_rng(zlib.crc32(chunk_id.encode()))
    matrix = rng.standard_normal((count, DIM)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return pack(MODEL_ID, matrix, np.arange(-1, count - 1))


def write_with_views(index, m: DocumentMeta, bodies_and_vectors: list[tuple[str, np.ndarray]]) -> list[Chunk]:
    """write(), each chunk carrying view vectors as the indexer attaches them; returns the chunks."""
    chunks = [chunk(m, i, body) for i, (body, _) in enumerate(bodies_and_vectors)]
    for c in chunks:
        c.views = views_for(c.chunk_id)
    existing = index.existing_chunk_ids(m, MODEL_ID)
    vectors = {
        c.chunk_id: v for c, (_, v) in zip(chunks, bodies_and_vectors, strict=True) if c.chunk_id not in existing
    }
    index.replace_document_version(m, chunks, vectors, MODEL_ID)
    return chunks


def stored_views(index, tenant: str = "acme") -> dict[str, ViewVectors | None]:
    """Every stored chunk's view vectors by chunk id, as export reads them."""
    return {c.chunk_id: c.views for _, chunks, _ in index.export(tenant) for c in chunks}


def ids(hits) -> list[str]:
    return [h.chunk.meta.document_id for h in hits]


class IndexConformance:
    ANY = SearchFilters()

    def test_empty_index_answers_nothing(self, index):
        assert index.bm25("acme", "refund", self.ANY, 10) == []
        assert index.knn("acme", unit(1), MODEL_ID, self.ANY, 10) == []

    def test_document_scopes_are_those_of_every_stored_version(self, index):
        write(index, meta(doc="d", version="1", scopes=("hr",)), [("one", unit(1))])
        write(index, meta(doc="d", version="2", scopes=("public", "finance")), [("two", unit(0, 1))])
        assert index.document_scopes("acme", "d") == {"hr", "public", "finance"}
        assert index.document_scopes("other", "d") == set() and index.document_scopes("acme", "nope") == set()

    def test_listing_gives_each_version_with_its_chunks_and_scopes(self, index):
        write(index, meta(doc="d", version="1", scopes=("hr",)), [("one", unit(1)), ("uno", unit(1, 1))])
        write(index, meta(doc="d", version="2", scopes=("public", "finance")), [("two", unit(0, 1))])
        write(index, meta(tenant="other", doc="x"), [("elsewhere", unit(1))])
        versions, next_token = list_page(index, "acme")
        listed = [(v.document_id, v.version, v.chunks, v.access_scopes, v.source_uri) for v in versions]
        assert listed == [("d", "1", 2, ["hr"], "d.md"), ("d", "2", 1, ["finance", "public"], "d.md")]
        assert next_token == ""

    def test_listing_pages_hold_every_version_once_and_whole(self, index, monkeypatch):
        """Pages follow (document_id, version) order from a key, and a version's chunks are never split across
        pages, even where the chunks of one page take several searches (a small search size forces that)."""
        monkeypatch.setattr(opensearch_backend, "_PAGE", 3)
        for n in range(7):
            for version in ("1", "2")[: 1 + n % 2]:
                chunks = [(f"doc {n} v{version} part {i}", unit(1, i)) for i in range(1 + n % 3)]
                write(index, meta(doc=f"doc-{n}", version=version), chunks)
        whole, token = list_page(index, "acme")
        assert token == "" and len(whole) == 10
        paged, token, pages = [], "", 0
        while True:
            versions, token = list_page(index, "acme", token, 3)
            assert len(versions) == 3 or not token
            paged += versions
            pages += 1
            if not token:
                break
        assert pages == 4 and paged == whole
        assert [(v.document_id, v.version, v.chunks) for v in paged[:3]] == [
            ("doc-0", "1", 1),
            ("doc-1", "1", 2),
            ("doc-1", "2", 2),
        ]

    @pytest.mark.parametrize("token", ["not-a-token!", "bm90IGpzb24", "WyJqdXN0IG9uZSJd"])
    def test_a_page_token_no_page_gave_is_refused(self, index, token):
        with pytest.raises(InvalidArgument, match="page_token"):
            list_page(index, "acme", token)
        with pytest.raises(InvalidArgument, match="page_size"):
            list_page(index, "acme", "", -1)

    def test_a_write_whose_stored_chunks_were_removed_meanwhile_is_aborted_whole(self, index):
        """Another indexer process replaced the version between this write's look-up and its write."""
        m = meta(doc="race")
        write(index, m, [("alpha", unit(1)), ("beta", unit(0, 1))])
        mine = [chunk(m, 0, "alpha"), chunk(m, 1, "gamma")]
        stored = index.existing_chunk_ids(m, MODEL_ID)  # alpha: stored, so not embedded again
        vectors = {c.chunk_id: unit(1, 1) for c in mine if c.chunk_id not in stored}
        write(index, m, [("delta", unit(0, 0, 1))])  # the concurrent write
        with pytest.raises(Aborted, match="race@1: chunk .* removed by a concurrent write"):
            index.replace_document_version(m, mine, vectors, MODEL_ID)
        index.refresh()
        assert [h.chunk.body for h in index.bm25("acme", "alpha gamma delta", self.ANY, 10)] == ["delta"]

    def test_upsert_is_idempotent(self, index):
        docs = [("refunds within 14 days", unit(1, 0)), ("invoices are monthly", unit(0, 1))]
        first = write(index, meta(), docs)
        second = write(index, meta(), docs)
        assert (first.written, first.unchanged) == (2, 0)
        assert (second.written, second.unchanged, second.removed) == (0, 2, 0)
        assert index.stats("acme")["chunks"] == 2

    def test_changed_document_replaces_exactly_its_own_chunks(self, index):
        write(index, meta(doc="a"), [("alpha one", unit(1)), ("alpha two", unit(1, 1))])
        write(index, meta(doc="b"), [("beta one", unit(0, 1))])
        result = write(index, meta(doc="a"), [("alpha one", unit(1)), ("alpha three", unit(1, 0, 1))])
        assert (result.written, result.unchanged, result.removed) == (1, 1, 1)
        bodies = sorted(h.chunk.body for h in index.bm25("acme", "alpha beta", self.ANY, 10))
        assert bodies == ["alpha one", "alpha three", "beta one"]

    def test_bm25_ranks_the_matching_chunk_first(self, index):
        write(index, meta(doc="err"), [("E-4412 sync conflict between two devices", unit(1))])
        write(index, meta(doc="other"), [("E-4421 sync token invalid", unit(0, 1))])
        hits = index.bm25("acme", "E-4412", self.ANY, 10)
        assert ids(hits)[0] == "err" and hits[0].score > 0
        assert "other" not in ids(hits)  # the identifier is one phrase, not "e" OR "4412"

    def test_knn_orders_by_cosine(self, index):
        write(index, meta(doc="x"), [("x", unit(1, 0))])
        write(index, meta(doc="y"), [("y", unit(0.7, 0.7))])
        write(index, meta(doc="z"), [("z", unit(0, 1))])
        hits = index.knn("acme", unit(1, 0.1), MODEL_ID, self.ANY, 3)
        assert ids(hits) == ["x", "y", "z"]
        assert hits[0].score == pytest.approx(float(unit(1, 0) @ unit(1, 0.1)), abs=1e-5)

    def test_tenant_isolation_even_with_few_chunks(self, index):
        write(index, meta(tenant="big", doc="b"), [(f"refund rule {i}", unit(1, i)) for i in range(20)])
        write(index, meta(tenant="tiny", doc="t"), [("refund rule tiny", unit(1))])
        assert ids(index.bm25("tiny", "refund rule", self.ANY, 50)) == ["t"]
        assert ids(index.knn("tiny", unit(1), MODEL_ID, self.ANY, 50)) == ["t"]
        assert index.bm25("nobody", "refund", self.ANY, 50) == []

    def test_access_scopes_filter_inside_both_queries(self, index):
        write(index, meta(doc="pub"), [("salary policy overview", unit(1))])
        write(index, meta(doc="hr", scopes=("hr-confidential",)), [("salary bands table", unit(1))])
        assert ids(index.bm25("acme", "salary", self.ANY, 10)) == ["pub"]
        assert ids(index.knn("acme", unit(1), MODEL_ID, self.ANY, 10)) == ["pub"]
        hr = SearchFilters(access_scopes=["hr-confidential"])
        assert sorted(ids(index.bm25("acme", "salary", hr, 10))) == ["hr", "pub"]
        assert index.get_chunk("acme", index.bm25("acme", "bands", hr, 1)[0].chunk.chunk_id, []) is None

    def test_current_only_by_default_and_as_of(self, index):
        write(
            index,
            meta(doc="refund", version="2025", eff_from="2025-01-01", eff_to="2026-01-01"),
            [("refund window 30 days", unit(1))],
        )
        write(index, meta(doc="refund", version="2026", eff_from="2026-01-01"), [("refund window 14 days", unit(1))])
        current = index.bm25("acme", "refund window", self.ANY, 10)
        assert [h.chunk.meta.version for h in current] == ["2026"]
        assert [h.chunk.meta.version for h in index.knn("acme", unit(1), MODEL_ID, self.ANY, 10)] == ["2026"]
        then = SearchFilters(as_of="2025-06-30")
        assert [h.chunk.meta.version for h in index.bm25("acme", "refund window", then, 10)] == ["2025"]
        everything = SearchFilters(include_superseded=True)
        assert sorted(h.chunk.meta.version for h in index.bm25("acme", "refund", everything, 10)) == ["2025", "2026"]

    def test_future_versions_are_not_yet_current(self, index):
        write(index, meta(doc="future", eff_from="2999-01-01"), [("quantum refunds", unit(1))])
        assert index.bm25("acme", "quantum", self.ANY, 10) == []

    def test_document_and_content_type_filters(self, index):
        write(index, meta(doc="a"), [("shared words here", unit(1))])
        write(index, meta(doc="b"), [("shared words there", unit(1))])
        only_b = SearchFilters(document_ids=["b"])
        assert ids(index.bm25("acme", "shared words", only_b, 10)) == ["b"]
        assert ids(index.knn("acme", unit(1), MODEL_ID, only_b, 10)) == ["b"]
        assert index.bm25("acme", "shared", SearchFilters(content_types=["application/pdf"]), 10) == []
        but_b = SearchFilters(exclude_document_ids=["b", "never-indexed"])
        assert ids(index.bm25("acme", "shared words", but_b, 10)) == ["a"]
        assert ids(index.knn("acme", unit(1), MODEL_ID, but_b, 10)) == ["a"]
        neither = SearchFilters(document_ids=["a", "b"], exclude_document_ids=["a", "b"])
        assert (
            index.bm25("acme", "shared", neither, 10) == [] and index.knn("acme", unit(1), MODEL_ID, neither, 10) == []
        )

    def test_delete_removes_every_version_from_both_sides(self, index):
        write(index, meta(doc="gone", version="1"), [("delete me please", unit(1))])
        write(index, meta(doc="gone", version="2"), [("delete me again", unit(1, 1))])
        write(index, meta(doc="stay"), [("delete me not", unit(0, 1))])
        assert index.delete_document("acme", "gone") == 2
        everything = SearchFilters(include_superseded=True)
        assert ids(index.bm25("acme", "delete", everything, 10)) == ["stay"]
        assert ids(index.knn("acme", unit(1), MODEL_ID, everything, 10)) == ["stay"]

    def test_model_mismatch_is_refused(self, index):
        write(index, meta(), [("vectors from one model", unit(1))])
        with pytest.raises(FailedPrecondition, match="embedding model mismatch"):
            index.knn("acme", unit(1), "other/model", self.ANY, 10)

    @pytest.mark.parametrize(
        "query",
        [
            '"unbalanced quote',
            "AND OR NOT",
            "NEAR(a b)",
            "col:refund",
            "refund*",
            "😀 emoji 🚀",
            "(((",
            "-",
            "^x",
            "refund " * 2000,
        ],
    )
    def test_special_characters_never_break_the_query(self, index, query):
        write(index, meta(), [("refund emoji policy", unit(1))])
        hits = index.bm25("acme", query, self.ANY, 10)
        assert isinstance(hits, list)

    # ---- view vectors stored with the chunk (the maxsim reranker reads them instead of embedding) ----

    def test_view_vectors_are_stored_and_returned_with_the_chunk(self, index):
        chunks = write_with_views(
            index, meta(doc="v"), [("rerank views ride along", unit(1)), ("views too", unit(1, 1))]
        )
        write(index, meta(doc="plain"), [("plain views absent", unit(1, 0, 1))])
        want = {c.chunk_id: c.views for c in chunks}
        everything = self.ANY
        hits = index.bm25("acme", "views", everything, 10) + index.knn("acme", unit(1), MODEL_ID, everything, 10)
        assert {h.chunk.meta.document_id for h in hits} == {"v", "plain"}
        for hit in hits:
            assert hit.chunk.views == want.get(hit.chunk.chunk_id), hit.chunk.chunk_id  # None for "plain"
        exported = stored_views(index)
        assert {cid: exported[cid] for cid in want} == want
        vectors, units = unpack(exported[chunks[0].chunk_id])
        assert vectors.shape == (3, DIM) and units.tolist() == [-1, 0, 1]
        rng = np.random.default_rng(zlib.crc32(chunks[0].chunk_id.encode()))
        original = rng.standard_normal((3, DIM)).astype(np.float32)
        original /= np.linalg.norm(original, axis=1, keepdims=True)
        assert np.allclose(vectors, original, atol=1e-3)  # float16 storage

    def test_view_vectors_go_with_their_chunk(self, index):
        m = meta(doc="v")
        first = write_with_views(index, m, [("first body", unit(1)), ("kept body", unit(0, 1))])
        # The same version again: the changed chunk's row (and its views) is purged, the unchanged one keeps its
        # views even when rewritten by a writer that carries none.
        second = write_with_views(index, m, [("replacement body", unit(1)), ("kept body", unit(0, 1))])
        write(index, m, [("replacement body", unit(1)), ("kept body", unit(0, 1))])
        stored = stored_views(index)
        assert set(stored) == {second[0].chunk_id, first[1].chunk_id} and first[0].chunk_id not in stored
        assert stored[first[1].chunk_id] == first[1].views and stored[second[0].chunk_id] == second[0].views
        hits = index.bm25("acme", "first body replacement kept", SearchFilters(include_superseded=True), 10)
        assert first[0].chunk_id not in {h.chunk.chunk_id for h in hits}
        # A second version supersedes the first; deleting the document removes both with their views.
        write_with_views(index, meta(doc="v", version="2"), [("second version body", unit(1))])
        write_with_views(index, meta(doc="keep"), [("another document", unit(0, 1))])
        assert index.delete_document("acme", "v") == 3
        assert [c for c in stored_views(index) if c.startswith("acme-v-")] == []
        assert list(stored_views(index).values()) == [views_for(next(iter(stored_views(index))))]
