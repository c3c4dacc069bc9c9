"""The conformance suite against a real OpenSearch node (`make opensearch-up`; CI starts it first).

No skip when the node is missing: a backend that silently goes untested looks like one that passes.
"""

import os
import uuid

import numpy as np
import pytest
from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as EngineConnectionError

from shared.errors import FailedPrecondition, Unavailable
from shared.index.factory import open_index
from shared.index.lexical import search_phrases
from shared.index.opensearch import OpenSearchIndex
from shared.model import SearchFilters
from tests.conformance.index_suite import MODEL_ID, IndexConformance, chunk, meta, unit, write
from tests.conformance.isolation import IsolationConformance

URL = os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200")


@pytest.fixture(scope="session")
def client():
    client = OpenSearch(hosts=[URL], timeout=30)
    try:
        health = client.cluster.health(wait_for_status="yellow")
    except EngineConnectionError as exc:
        pytest.fail(
            f"OpenSearch is not reachable at {URL} ({exc.info or exc}); start it with "
            "`make opensearch-up` or point OPENSEARCH_URL at a node",
            pytrace=False,
        )
    assert health["status"] in ("yellow", "green"), health
    return client


@pytest.fixture
def index(client):
    backend = OpenSearchIndex(URL, f"ragmesh-test-{uuid.uuid4().hex[:12]}", client=client)
    backend.warm_up()
    yield backend
    backend.drop()


class TestOpenSearchIndex(IndexConformance, IsolationConformance):
    def test_a_second_client_sees_writes(self, index):
        """A retriever replica with its own client (and no cached dimension) reads the writer's chunks."""
        reader = OpenSearchIndex(URL, index.index)
        reader.warm_up()
        assert reader.knn("acme", unit(1), MODEL_ID, self.ANY, 5) == []
        write(index, meta(), [("fresh content", unit(1))])
        assert len(reader.bm25("acme", "fresh", self.ANY, 5)) == 1
        assert len(reader.knn("acme", unit(1), MODEL_ID, self.ANY, 5)) == 1

    def test_count_chunks_spans_tenants(self, index):
        write(index, meta(tenant="a"), [("one", unit(1)), ("two", unit(0, 1))])
        write(index, meta(tenant="b"), [("three", unit(1))])
        assert index.count_chunks() == 3

    def test_open_end_round_trips_as_empty(self, index):
        write(index, meta(eff_to=""), [("no end date", unit(1))])
        assert index.bm25("acme", "end date", self.ANY, 1)[0].chunk.meta.effective_to == ""

    def test_governance_change_keeps_the_vector(self, index):
        """An unchanged chunk is updated in place; the update must not drop it from k-NN."""
        write(index, meta(scopes=("public",)), [("moved to hr", unit(1))])
        result = write(index, meta(scopes=("hr",)), [("moved to hr", unit(1))])
        assert (result.written, result.unchanged) == (0, 1)
        assert index.knn("acme", unit(1), MODEL_ID, self.ANY, 5) == []
        hr = SearchFilters(access_scopes=["hr"])
        assert [h.chunk.body for h in index.knn("acme", unit(1), MODEL_ID, hr, 5)] == ["moved to hr"]

    def test_re_embedding_with_another_model_replaces_the_vectors(self, index):
        write(index, meta(), [("same text", unit(1))])
        chunks = [chunk(meta(), 0, "same text")]
        result = index.replace_document_version(meta(), chunks, {chunks[0].chunk_id: unit(0, 1)}, "new/model")
        assert (result.written, result.unchanged, result.removed) == (1, 0, 1)
        assert index.existing_chunk_ids(meta(), "new/model") == {chunks[0].chunk_id}
        hits = index.knn("acme", unit(0, 1), "new/model", self.ANY, 5)
        assert [h.chunk.embedding_model_id for h in hits] == ["new/model"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)

    def test_a_model_of_another_dimension_is_refused(self, index):
        write(index, meta(), [("eight dimensions", unit(1))])
        with pytest.raises(FailedPrecondition, match="embedding model mismatch"):
            index.knn("acme", np.full(4, 0.5, dtype=np.float32), "small/model", self.ANY, 5)


def test_an_unreachable_node_is_unavailable():
    with pytest.raises(Unavailable, match="unreachable"):
        OpenSearchIndex("http://127.0.0.1:9", "ragmesh-nowhere").warm_up()


def test_factory_reads_url_and_prefix(tmp_path):
    backend = open_index(
        "opensearch", str(tmp_path), {"OPENSEARCH_URL": "http://127.0.0.1:9201", "RAGMESH_OPENSEARCH_PREFIX": "team-a"}
    )
    assert (backend.name, backend.url, backend.index) == ("opensearch", "http://127.0.0.1:9201", "team-a-chunks")
    with pytest.raises(ValueError, match="embedded, opensearch"):
        open_index("elastic", str(tmp_path))


def test_search_phrases_keep_identifiers_whole():
    assert search_phrases('E-4412 "sync" OR x*') == ["E 4412", "sync", "OR", "x"]
    assert search_phrases("!!! ???") == []


def test_each_embedding_model_gets_its_own_index_generation(tmp_path):
    env = {"RAGMESH_OPENSEARCH_PREFIX": "team-a"}
    bge = open_index("opensearch", str(tmp_path), env, embed_model="bge")
    e5 = open_index("opensearch", str(tmp_path), env, embed_model="intfloat/e5-small-v2")
    assert bge.index == "team-a-chunks-baai-bge-small-en-v1-5"
    assert e5.index == "team-a-chunks-intfloat-e5-small-v2"
    embedded = open_index("embedded", str(tmp_path), embed_model="BAAI/bge-small-en-v1.5")
    assert embedded.path.endswith("index-baai-bge-small-en-v1-5.sqlite")
