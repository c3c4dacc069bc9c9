"""The chunk index's shard and replica counts come from RAGMESH_OPENSEARCH_SHARDS / _REPLICAS (what the Helm chart's
opensearch.shards / opensearch.replicas set) and are what a real node creates (`make opensearch-up`; no skip); the
k-NN query's ef_search comes from RAGMESH_OPENSEARCH_EF_SEARCH (opensearch.efSearch)."""

import uuid

import pytest

from shared.config import ConfigError
from shared.index.factory import open_index
from shared.model import SearchFilters
from tests.conformance.index_suite import MODEL_ID, chunk, meta, unit
from tests.conformance.test_opensearch_index import URL, client  # noqa: F401 - the node fixture


def test_the_index_is_created_with_the_configured_shards_and_replicas(client):  # noqa: F811
    prefix = f"layout-{uuid.uuid4().hex[:8]}"
    env = {
        "OPENSEARCH_URL": URL,
        "RAGMESH_OPENSEARCH_PREFIX": prefix,
        "RAGMESH_OPENSEARCH_SHARDS": "2",
        "RAGMESH_OPENSEARCH_REPLICAS": "0",
    }
    index = open_index("opensearch", "", env=env)
    try:
        index.warm_up()
        settings = client.indices.get_settings(index=index.index)[index.index]["settings"]["index"]
        assert (settings["number_of_shards"], settings["number_of_replicas"]) == ("2", "0")
    finally:
        index.drop()


def test_the_defaults_are_one_shard_without_replicas():
    index = open_index("opensearch", "", env={"OPENSEARCH_URL": URL})
    assert (index.shards, index.replicas) == (1, 0)


def test_the_knn_query_uses_the_configured_ef_search(client):  # noqa: F811
    """The setting reaches the query a real node answers: the request body carries it (the node would refuse a
    malformed one), and the nearest chunk is still found."""
    prefix = f"ef-{uuid.uuid4().hex[:8]}"
    env = {"OPENSEARCH_URL": URL, "RAGMESH_OPENSEARCH_PREFIX": prefix, "RAGMESH_OPENSEARCH_EF_SEARCH": "700"}
    index = open_index("opensearch", "", env=env)
    sent: list[dict] = []
    msearch = index.client.msearch  # k-NN goes out as one msearch (the query and the model check)

    def recorded(*args, **kwargs):
        sent.extend(kwargs.get("body") or [])
        return msearch(*args, **kwargs)

    index.client.msearch = recorded
    try:
        index.warm_up()
        m = meta()
        chunks = [chunk(m, i, f"text {i}") for i in range(3)]
        vectors = {c.chunk_id: unit(*([0.0] * i), 1.0) for i, c in enumerate(chunks)}
        index.replace_document_version(m, chunks, vectors, MODEL_ID)
        hits = index.knn(m.tenant_id, unit(0.0, 0.0, 1.0), MODEL_ID, SearchFilters(), 2)
        assert hits[0].chunk.chunk_id == chunks[2].chunk_id
        knn_bodies = [b["query"]["knn"]["embedding"] for b in sent if "knn" in b.get("query", {})]
        assert knn_bodies and all(b["method_parameters"]["ef_search"] == 700 for b in knn_bodies)
    finally:
        index.drop()


@pytest.mark.parametrize(
    "name,value",
    [
        ("RAGMESH_OPENSEARCH_SHARDS", "0"),
        ("RAGMESH_OPENSEARCH_REPLICAS", "two"),
        ("RAGMESH_OPENSEARCH_EF_SEARCH", "0"),
    ],
)
def test_a_bad_count_is_refused_naming_the_variable(name, value):
    with pytest.raises(ConfigError, match=f"{name}='{value}'"):
        open_index("opensearch", "", env={"OPENSEARCH_URL": URL, name: value})
