"""Selects the index backend from configuration (`RAGMESH_INDEX`)."""

import os

from shared.index.embedded import EmbeddedIndex


def open_index(kind: str, data_dir: str):
    if kind == "embedded":
        return EmbeddedIndex(os.path.join(data_dir, "index.sqlite"))
    raise ValueError(f"RAGMESH_INDEX={kind!r}: supported backends are 'embedded'")
