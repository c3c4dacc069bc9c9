"""Selects the index backend from configuration (`RAGMESH_INDEX`).

Each embedding model gets its own index generation (an SQLite file, an OpenSearch index): switching
the model re-embeds into a new generation on the next ingest and never mixes vector spaces; the old
generation stays readable by the old model until it is deleted.
"""

import os
import re
from collections.abc import Mapping

from shared.config import MeshSettings, mesh
from shared.index.base import IndexBackend
from shared.index.embedded import EmbeddedIndex

BACKENDS = ("embedded", "opensearch")
DEFAULT_OPENSEARCH_URL: str = MeshSettings.model_fields["opensearch_url"].default
DEFAULT_OPENSEARCH_PREFIX: str = MeshSettings.model_fields["opensearch_prefix"].default


def generation(embed_model: str) -> str:
    """The index-name suffix for a model: lowercase, [a-z0-9-] (valid for OpenSearch and file names)."""
    from shared.embedding.registry import canonical_name

    return re.sub(r"[^a-z0-9]+", "-", canonical_name(embed_model).lower()).strip("-")


def open_index(
    kind: str, data_dir: str, env: Mapping[str, str] | None = None, embed_model: str | None = None
) -> IndexBackend:
    """The backend; with `embed_model`, that model's generation (what the services open)."""
    settings = mesh(env)
    suffix = f"-{generation(embed_model)}" if embed_model else ""
    if kind == "embedded":
        return EmbeddedIndex(os.path.join(data_dir, f"index{suffix}.sqlite"))
    if kind == "opensearch":
        # Imported here so that the embedded backend needs no OpenSearch client at all.
        from shared.index.opensearch import HnswParams, OpenSearchIndex

        # Every process of one mesh (indexer and retrievers) must name the same index.
        return OpenSearchIndex(
            settings.opensearch_url,
            f"{settings.opensearch_prefix}-chunks{suffix}",
            # The chunk index's layout on a cluster, used when it is created (deploy/helm: opensearch.shards/replicas).
            shards=settings.opensearch_shards,
            replicas=settings.opensearch_replicas,
            hnsw=HnswParams(ef_search=settings.opensearch_ef_search),
        )
    raise ValueError(f"RAGMESH_INDEX={kind!r}: supported backends are {', '.join(BACKENDS)}")
