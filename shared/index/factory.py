"""Selects the index backend from configuration (`RAGMESH_INDEX`).

Each embedding model gets its own index generation (an SQLite file, an OpenSearch index): switching
the model re-embeds into a new generation on the next ingest and never mixes vector spaces; the old
generation stays readable by the old model until it is deleted.
"""

import os
import re
from collections.abc import Mapping

from shared.config import mesh
from shared.index.base import IndexBackend
from shared.index.embedded import EmbeddedIndex

BACKENDS = ("embedded", "opensearch")
DEFAULT_OPENSEARCH_URL = "http://127.0.0.1:9200"
DEFAULT_OPENSEARCH_PREFIX = "ragmesh"


def generation(embed_model: str) -> str:
    """The index-name suffix for a model: lowercase, [a-z0-9-] (valid for OpenSearch and file names)."""
    from shared.embedding.registry import canonical_name

    return re.sub(r"[^a-z0-9]+", "-", canonical_name(embed_model).lower()).strip("-")


def open_index(
    kind: str, data_dir: str, env: Mapping[str, str] | None = None, embed_model: str | None = None
) -> IndexBackend:
    """The backend; with `embed_model`, that model's generation (what the services open)."""
    env = os.environ if env is None else env
    suffix = f"-{generation(embed_model)}" if embed_model else ""
    if kind == "embedded":
        return EmbeddedIndex(os.path.join(data_dir, f"index{suffix}.sqlite"))
    if kind == "opensearch":
        # Imported here so that the embedded backend needs no OpenSearch client at all.
        from shared.index.opensearch import OpenSearchIndex

        # Every process of one mesh (indexer and retrievers) must name the same index.
        prefix = env.get("RAGMESH_OPENSEARCH_PREFIX", DEFAULT_OPENSEARCH_PREFIX)
        layout = mesh(env)
        return OpenSearchIndex(
            env.get("OPENSEARCH_URL", DEFAULT_OPENSEARCH_URL),
            f"{prefix}-chunks{suffix}",
            # The chunk index's layout on a cluster, used when it is created (deploy/helm: opensearch.shards/replicas).
            shards=layout.opensearch_shards,
            replicas=layout.opensearch_replicas,
        )
    raise ValueError(f"RAGMESH_INDEX={kind!r}: supported backends are {', '.join(BACKENDS)}")
