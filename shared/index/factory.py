"""Selects the index backend from configuration (`RAGMESH_INDEX`)."""

import os

from shared.index.embedded import EmbeddedIndex

BACKENDS = ("embedded", "opensearch")
DEFAULT_OPENSEARCH_URL = "http://127.0.0.1:9200"
DEFAULT_OPENSEARCH_PREFIX = "ragmesh"


def open_index(kind: str, data_dir: str, env: dict | None = None):
    env = os.environ if env is None else env
    if kind == "embedded":
        return EmbeddedIndex(os.path.join(data_dir, "index.sqlite"))
    if kind == "opensearch":
        # Imported here so that the embedded backend needs no OpenSearch client at all.
        from shared.index.opensearch import OpenSearchIndex

        # Every process of one mesh (indexer and retrievers) must name the same index.
        prefix = env.get("RAGMESH_OPENSEARCH_PREFIX", DEFAULT_OPENSEARCH_PREFIX)
        return OpenSearchIndex(env.get("OPENSEARCH_URL", DEFAULT_OPENSEARCH_URL), f"{prefix}-chunks")
    raise ValueError(f"RAGMESH_INDEX={kind!r}: supported backends are {', '.join(BACKENDS)}")
