import pytest

from shared.index.embedded import EmbeddedIndex, fts_query
from tests.conformance.index_suite import IndexConformance
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
