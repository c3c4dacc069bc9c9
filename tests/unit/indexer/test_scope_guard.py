"""A guarded write may replace or delete only documents stored within the caller's scopes."""

import pytest

from services.indexer.service import DocumentIndexer
from shared.errors import PermissionDenied
from shared.index.embedded import EmbeddedIndex
from tests.conformance.index_suite import meta, unit, write


@pytest.fixture
def indexer(tmp_path):
    index = EmbeddedIndex(str(tmp_path / "index.sqlite"))
    index.warm_up()
    write(index, meta(doc="hr/salaries", scopes=("hr",)), [("bands", unit(1))])
    write(index, meta(doc="faq", scopes=("public",)), [("faq", unit(0, 1))])
    return DocumentIndexer(index, embedder=None)  # the guard runs before anything is embedded


def test_a_writer_cannot_replace_or_delete_a_document_outside_its_scopes(indexer):
    with pytest.raises(PermissionDenied, match="cannot replace 'hr/salaries'.*'hr'"):
        indexer.upsert(meta(doc="hr/salaries", scopes=("support",)), [], held_scopes=["support"])
    with pytest.raises(PermissionDenied, match="cannot delete 'hr/salaries'"):
        indexer.delete("acme", "hr/salaries", held_scopes=["support"])
    assert indexer.index.document_scopes("acme", "hr/salaries") == {"hr"}


def test_held_all_and_unguarded_calls_pass(indexer):
    assert indexer.delete("acme", "faq", held_scopes=["support"]) == 1  # public: every writer of the tenant
    assert indexer.delete("acme", "hr/salaries", held_scopes=["hr"]) == 1
    write(indexer.index, meta(doc="hr/salaries", scopes=("hr",)), [("bands", unit(1))])
    assert indexer.delete("acme", "hr/salaries", held_scopes=["*"]) == 1
    write(indexer.index, meta(doc="hr/salaries", scopes=("hr",)), [("bands", unit(1))])
    assert indexer.delete("acme", "hr/salaries") == 1  # no guard: authentication off, internal callers
