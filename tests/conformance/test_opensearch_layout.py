"""The chunk index's shard and replica counts come from RAGMESH_OPENSEARCH_SHARDS / _REPLICAS (what the Helm chart's
opensearch.shards / opensearch.replicas set) and are what a real node creates (`make opensearch-up`; no skip)."""

import uuid

import pytest

from shared.config import ConfigError
from shared.index.factory import open_index
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


@pytest.mark.parametrize("name,value", [("RAGMESH_OPENSEARCH_SHARDS", "0"), ("RAGMESH_OPENSEARCH_REPLICAS", "two")])
def test_a_bad_count_is_refused_naming_the_variable(name, value):
    with pytest.raises(ConfigError, match=f"{name}='{value}'"):
        open_index("opensearch", "", env={"OPENSEARCH_URL": URL, name: value})
