"""Embedders: one interface for passages (indexer) and queries (retriever)."""

from shared.embedding.base import Embedder, ModelSpec, resolve_model_dir
from shared.embedding.onnx import OnnxEmbedder, OnnxSpec
from shared.embedding.registry import (
    KNOWN_MODELS,
    build_embedder,
    build_query_embedder,
    canonical_name,
    tokenizer_source,
)
from shared.embedding.sentence_transformer import SentenceTransformerEmbedder
from shared.embedding.tokens import TokenCounter

__all__ = [
    "KNOWN_MODELS",
    "Embedder",
    "ModelSpec",
    "OnnxEmbedder",
    "OnnxSpec",
    "SentenceTransformerEmbedder",
    "TokenCounter",
    "build_embedder",
    "build_query_embedder",
    "canonical_name",
    "resolve_model_dir",
    "tokenizer_source",
]
