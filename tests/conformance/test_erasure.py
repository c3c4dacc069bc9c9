"""Erasure on both index backends (a real SQLite file, a real OpenSearch node): the erased document's
text and chunk ids are gone from every query path and, for SQLite, from the raw bytes of the file and
its write-ahead log; other documents and tenants are untouched; erasing again is a no-op."""

import os
import uuid

import pytest

from shared.erasure import scan_files, sqlite_files
from shared.index.embedded import EmbeddedIndex
from shared.index.erasure import erase
from shared.model import SearchFilters
from tests.conformance.index_suite import MODEL_ID, chunk, stored_views, unit, write, write_with_views
from tests.conformance.index_suite import meta as make_meta

URL = os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200")
FIRST = "Mirela Vasquez-Oduya signed the Kestrelwood indemnity addendum 7741-QX on behalf of Brannock Holdings."
SECRET = FIRST + " The escrow release requires countersignature by Ottoline Farraday within nineteen business days."
SHARED = "Refunds are issued within fourteen days of a written request."
ANY = SearchFilters(include_superseded=True)


# Each OpenSearch erasure waits ~30 s for the shard's retention lease to release the deleted documents (not a
# setting OpenSearch accepts), so these run beside the rest of `make test` (marker lease_wait).
@pytest.fixture(params=["embedded", pytest.param("opensearch", marks=pytest.mark.lease_wait)])
def index(request, tmp_path):
    if request.param == "embedded":
        backend = EmbeddedIndex(str(tmp_path / "index-test-model.sqlite"))
        backend.warm_up()
        yield backend
        return
    from opensearchpy import OpenSearch

    from shared.index.opensearch import OpenSearchIndex

    client = OpenSearch(hosts=[URL], timeout=60)
    name = f"ragmesh-erase-{uuid.uuid4().hex[:10]}-chunks-test-model"
    backend = OpenSearchIndex(URL, name, client=client)
    backend.warm_up()
    yield backend
    backend.drop()


@pytest.fixture
def older_generation(index, tmp_path):
    """The index an earlier embedding model wrote beside it (kept until a migration to the new one finishes)."""
    if isinstance(index, EmbeddedIndex):
        older = EmbeddedIndex(str(tmp_path / "index-older-model.sqlite"))
        older.warm_up()
        yield older
        return
    from shared.index.opensearch import OpenSearchIndex

    older = OpenSearchIndex(URL, index.index.replace("-chunks-test-model", "-chunks-older-model"), client=index.client)
    older.warm_up()
    yield older
    older.drop()


def _load(index):
    write(index, make_meta(doc="secret", version="1"), [(SECRET, unit(1)), (SHARED, unit(0, 1))])
    write(index, make_meta(doc="secret", version="2"), [(SECRET + " Amended.", unit(1, 1))])
    write(index, make_meta(doc="other-doc"), [(SHARED, unit(0, 1)), ("Invoices are sent monthly.", unit(0, 0, 1))])
    write(index, make_meta(tenant="globex", doc="secret"), [(FIRST, unit(1))])


def test_erasing_a_document_leaves_nothing_of_it(index):
    _load(index)
    assert index.knn("acme", unit(1), MODEL_ID, ANY, 10)  # a reader's vector view now holds the rows
    if isinstance(index, EmbeddedIndex):
        # The raw scan can fail: before erasure the file holds the text.
        assert scan_files(sqlite_files(index.path), ["Kestrelwood indemnity addendum"], []).probes_found == 1

    result = erase(index, "acme", "secret")

    assert result.document_ids == ["secret"] and len(result.chunk_ids) == 3
    assert result.probes and all(p in SECRET + " Amended." for p in result.probes)
    # Text another tenant's document also holds would be "found" after a correct erasure: not a probe.
    assert not any(p in FIRST or p in SHARED for p in result.probes)
    assert result.checks and all(c.clean for c in result.checks), result.checks
    assert sum(c.removed for c in result.checks) == 3
    assert all(c.probes_checked == len(result.probes) and c.ids_checked == 3 for c in result.checks)
    assert [h.chunk.meta.document_id for h in index.bm25("acme", "Kestrelwood indemnity", ANY, 10)] == []
    assert {h.chunk.meta.document_id for h in index.knn("acme", unit(1), MODEL_ID, ANY, 10)} == {"other-doc"}
    assert [h.chunk.meta.document_id for h in index.bm25("globex", "Kestrelwood", ANY, 10)] == ["secret"]
    assert {h.chunk.meta.document_id for h in index.bm25("acme", "refunds", ANY, 10)} == {"other-doc"}

    again = erase(index, "acme", "secret")
    assert again.chunk_ids == [] and all(c.clean and c.removed == 0 for c in again.checks)


def test_erasing_a_tenant_leaves_other_tenants(index):
    _load(index)
    result = erase(index, "acme", None)
    assert sorted(result.document_ids) == ["other-doc", "secret"] and len(result.chunk_ids) == 5
    assert all(c.clean for c in result.checks), result.checks
    assert index.stats("acme")["chunks"] == 0
    assert index.stats("globex")["chunks"] == 1
    if isinstance(index, EmbeddedIndex):
        assert result.probes and scan_files(sqlite_files(index.path), result.probes, result.chunk_ids).ids_found == 0


def _raw_bytes(index) -> bytes:
    return b"".join(open(path, "rb").read() for path in sqlite_files(index.path))


def test_erasing_a_document_leaves_none_of_its_view_vectors(index):
    secret = write_with_views(index, make_meta(doc="secret"), [(SECRET, unit(1)), (SECRET + " Annex.", unit(1, 1))])
    kept = write_with_views(index, make_meta(doc="other-doc"), [(SHARED, unit(0, 1))])
    blobs = [c.views.vectors for c in secret if c.views is not None]
    embedded = isinstance(index, EmbeddedIndex)
    if embedded:
        assert all(blob in _raw_bytes(index) for blob in blobs)  # the scan below can fail

    result = erase(index, "acme", "secret")

    assert result.checks and all(c.clean for c in result.checks), result.checks
    assert stored_views(index) == {kept[0].chunk_id: kept[0].views}
    hits = index.knn("acme", unit(1), MODEL_ID, ANY, 10) + index.bm25("acme", "Kestrelwood refunds", ANY, 10)
    assert {h.chunk.chunk_id for h in hits} == {kept[0].chunk_id}
    if embedded:
        assert not any(blob in _raw_bytes(index) for blob in blobs)
        assert "view vectors: 2 erased chunks' bytes (held by no other chunk) scanned, 0 found" in result.checks[0].note


def test_view_vectors_another_tenant_also_holds_stay_and_do_not_fail_the_check(index):
    """The same text under the same heading has the same views: erasing one tenant leaves another's copy,
    and finding those bytes in the file is no evidence against the erasure."""
    mine = write_with_views(index, make_meta(doc="secret"), [(SECRET, unit(1))])
    theirs = chunk(make_meta(tenant="globex", doc="secret"), 0, SECRET)
    theirs.views = mine[0].views
    index.replace_document_version(theirs.meta, [theirs], {theirs.chunk_id: unit(1)}, MODEL_ID)

    result = erase(index, "acme", None)

    assert result.checks and all(c.clean for c in result.checks), result.checks
    assert stored_views(index, "acme") == {} and stored_views(index, "globex") == {theirs.chunk_id: mine[0].views}
    if isinstance(index, EmbeddedIndex):
        assert "view vectors: 0 erased chunks' bytes (held by no other chunk) scanned" in result.checks[0].note


# A spreadsheet's rows: no run of five words is separated by single spaces only.
TABLE = (
    "| Office | City | Reception phone | Manager |\n|---|---|---|---|\n"
    "| Quay Tower | Dublin | +353 1 555 0142 | Padraig Oduya |\n"
    "| Lisbon Harbour | Lisbon | +351 21 555 0199 | Ines Carvalho-Mendonca |"
)


def test_erasing_a_table_probes_its_rows_text(index):
    """Without probes from its rows a table's erasure would be checked by chunk ids only, never by its text."""
    write(index, make_meta(doc="offices"), [(TABLE, unit(1))])
    write(index, make_meta(doc="other-doc"), [(SHARED, unit(0, 1))])

    result = erase(index, "acme", "offices")

    assert len(result.probes) >= 2 and all(p in TABLE for p in result.probes), result.probes
    assert any("Padraig" in p or "0142" in p for p in result.probes), result.probes
    assert result.checks and all(c.clean and c.probes_checked == len(result.probes) for c in result.checks)
    assert index.bm25("acme", "Padraig Oduya", ANY, 10) == []


def test_erasure_reaches_every_generation_of_the_index(index, older_generation):
    """A document the earlier model's index holds too is erased from both, with a check for each; on OpenSearch the
    two wait for their merges together."""
    _load(index)
    _load(older_generation)

    result = erase(index, "acme", "secret")

    assert len(result.checks) == 2 and all(c.clean for c in result.checks), result.checks
    assert [c.removed for c in result.checks] == [3, 3]
    assert len({c.location for c in result.checks}) == 2
    for generation in (index, older_generation):
        assert generation.bm25("acme", "Kestrelwood indemnity", ANY, 10) == []
        assert [h.chunk.meta.document_id for h in generation.bm25("globex", "Kestrelwood", ANY, 10)] == ["secret"]
        assert {h.chunk.meta.document_id for h in generation.knn("acme", unit(1), MODEL_ID, ANY, 10)} == {"other-doc"}
