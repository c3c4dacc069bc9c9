"""Embedders: one interface for passages (indexer) and queries (retriever)."""

from shared.embedding.base import Embedder, ModelSpec, resolve_model_dir
from shared.embedding.sentence_transformer import SentenceTransformerEmbedder
from shared.embedding.tokens import TokenCounter

__all__ = ["Embedder", "ModelSpec", "SentenceTransformerEmbedder", "TokenCounter", "resolve_model_dir"]
