"""Closing a replaced document at a date, on both index backends (a real SQLite file, a real OpenSearch)."""

import os
import uuid

import pytest

from shared.index.embedded import EmbeddedIndex
from shared.index.supersede import close_document, settle_versions
from shared.model import SearchFilters
from tests.conformance.index_suite import MODEL_ID, meta, unit, write

URL = os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200")


@pytest.fixture(params=["embedded", "opensearch"])
def index(request, tmp_path):
    if request.param == "embedded":
        backend = EmbeddedIndex(str(tmp_path / "index.sqlite"))
        backend.warm_up()
        yield backend
        return
    from shared.index.opensearch import OpenSearchIndex

    backend = OpenSearchIndex(URL, f"ragmesh-supersede-{uuid.uuid4().hex[:10]}")
    backend.warm_up()
    yield backend
    backend.drop()


def _docs(index, **filters) -> set[str]:
    return {h.chunk.meta.document_id for h in index.bm25("acme", "returns", SearchFilters(**filters), 10)}


def test_a_closed_document_is_current_only_before_its_end(index):
    write(index, meta(doc="returns-2025", eff_from="2025-01-01"), [("returns within 14 days", unit(1))])
    write(index, meta(doc="returns-2026", eff_from="2026-03-01"), [("returns within 30 days", unit(0, 1))])
    write(index, meta(tenant="other", doc="returns-2025", eff_from="2025-01-01"), [("returns", unit(1))])
    assert _docs(index) == {"returns-2025", "returns-2026"}
    assert close_document(index, "acme", "returns-2025", "2026-03-01") == 1
    assert close_document(index, "acme", "returns-2025", "2026-06-01") == 0  # already closed before then
    assert _docs(index) == {"returns-2026"}
    assert _docs(index, as_of="2026-02-01") == {"returns-2025"}
    assert _docs(index, include_superseded=True) == {"returns-2025", "returns-2026"}
    assert index.knn("acme", unit(1), MODEL_ID, SearchFilters(), 5)[0].chunk.meta.document_id == "returns-2026"
    assert {h.chunk.meta.document_id for h in index.bm25("other", "returns", SearchFilters(), 5)} == {"returns-2025"}


def _versions(index, **filters) -> list[str]:
    hits = index.bm25("acme", "returns", SearchFilters(**filters), 10)
    return sorted({h.chunk.meta.version for h in hits if h.chunk.meta.document_id == "returns"})


def _write_version(index, version: str, eff_from: str, eff_to: str = "") -> int:
    m = meta(doc="returns", version=version, eff_from=eff_from, eff_to=eff_to)
    write(index, m, [(f"returns policy version {version}", unit(1))])
    return settle_versions(index, "acme", "returns", version)


def test_a_new_version_ends_the_one_before_it(index):
    assert _write_version(index, "1", "2025-01-01") == 0
    assert _write_version(index, "2", "2026-01-01") == 1
    assert _versions(index) == ["2"]
    assert _versions(index, as_of="2025-06-01") == ["1"]
    assert _versions(index, include_superseded=True) == ["1", "2"]
    assert _write_version(index, "2", "2026-01-01") == 0  # the same version again changes nothing


def test_undated_versions_follow_the_order_they_were_written(index):
    _write_version(index, "1", "1970-01-01")
    _write_version(index, "2", "1970-01-01")
    assert _versions(index) == ["2"]
    assert _versions(index, include_superseded=True) == ["1", "2"]


def test_an_older_version_written_late_ends_where_the_newer_begins(index):
    _write_version(index, "2026", "2026-01-01")
    assert _write_version(index, "2025", "2025-01-01") == 1  # backfilled history: 2025 is ended, 2026 untouched
    assert _versions(index) == ["2026"]
    assert _versions(index, as_of="2025-06-01") == ["2025"]


def test_stated_ends_that_do_not_overlap_are_kept(index):
    _write_version(index, "2025", "2025-01-01", "2025-09-01")  # a gap until the next version
    assert _write_version(index, "2026", "2026-01-01") == 0
    assert _versions(index, as_of="2025-10-01") == []
    assert _versions(index) == ["2026"]
