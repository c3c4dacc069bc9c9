"""A sentence-transformers model folder (or hub id) as an embedder."""

from typing import Any

import numpy as np

from shared.embedding.base import ModelSpec, resolve_model_dir


class SentenceTransformerEmbedder:
    def __init__(
        self,
        model_name: str,
        threads: int = 2,
        batch_size: int = 32,
        query_prefix: str = "",
        passage_prefix: str = "",
        model_dir: str | None = None,
        spec: ModelSpec | None = None,
    ):
        self.model_name = model_name
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.model_dir = model_dir
        self.threads = threads
        self.batch_size = batch_size
        self._model: Any = None
        # Known ahead for a registered model; otherwise read from the model once it is loaded.
        self._spec = spec

    @property
    def spec(self) -> ModelSpec:
        """The model's id, dimension, window and prefixes. The dimension and window come from the model
        itself, so for an unregistered model asking before warm_up() loads it."""
        if self._spec is None:
            self.warm_up()
        assert self._spec is not None  # warm_up sets it or raises
        return self._spec

    def warm_up(self) -> None:
        if self._model is not None:
            return
        import torch
        from sentence_transformers import SentenceTransformer

        # Bounded: encoding must not fight the other thread pools over two cores.
        torch.set_num_threads(self.threads)
        self._model = SentenceTransformer(self.model_dir or resolve_model_dir(self.model_name), device="cpu")
        self._spec = ModelSpec(
            model_id=self.model_name,
            dimension=int(
                self._model.get_embedding_dimension()
                if hasattr(self._model, "get_embedding_dimension")
                else self._model.get_sentence_embedding_dimension()
            ),
            max_tokens=int(self._model.max_seq_length),
            query_prefix=self.query_prefix,
            passage_prefix=self.passage_prefix,
            version="sentence-transformers",
        )

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            raise RuntimeError("warm_up() must run before encoding")
        if not texts:
            return np.zeros((0, self.spec.dimension), dtype=np.float32)
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return vectors.astype(np.float32)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._encode([self.passage_prefix + t for t in texts])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode([self.query_prefix + t for t in texts])
