"""The scoring views of a chunk and their vectors: the one definition the indexer (which stores them at
ingest) and the maxsim reranker (which reads them, or embeds them itself for a chunk stored without them)
share, so both compute the same texts with the same embedder.

Stored as float16: half of float32's bytes, and for unit-length 384-d vectors a view's similarity moves by
about 1e-4 at most (float16 keeps 11 significant bits), far below any gap the reranker's order turns on;
8-bit codes would save half again but move similarities by ~1e-2.
"""

import numpy as np

from shared.embedding.base import Embedder
from shared.model import Chunk, ViewVectors
from shared.text import scoring_views

MAX_VIEWS_PER_CHUNK = 48
STORED_DTYPE = "float16"


def chunk_views(chunk: Chunk) -> list[tuple[str, int]]:
    """(text, answer-unit index) per view of the chunk; the body itself when it yields no view."""
    # A document without headings is still under its title: "Title: sentence" keeps the context.
    headings = chunk.heading_path or ([chunk.meta.title] if chunk.meta.title else [])
    return scoring_views(headings, chunk.body, MAX_VIEWS_PER_CHUNK) or [(chunk.body, -1)]


def embed_views(embedder: Embedder, chunks: list[Chunk]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per chunk: its view vectors (float32, one row per view) and each view's unit index; one batched
    embedding call for all of them."""
    texts: list[str] = []
    units: list[int] = []
    counts: list[int] = []
    for chunk in chunks:
        views = chunk_views(chunk)
        texts += [text for text, _ in views]
        units += [unit for _, unit in views]
        counts.append(len(views))
    if not texts:
        return []
    vectors = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    units_arr = np.asarray(units, dtype=np.int64)
    out, start = [], 0
    for count in counts:
        out.append((vectors[start : start + count], units_arr[start : start + count]))
        start += count
    return out


def pack(model_id: str, vectors: np.ndarray, units: np.ndarray) -> ViewVectors:
    """float32 view vectors -> the stored form (float16 little-endian bytes)."""
    matrix = np.ascontiguousarray(vectors, dtype="<f2")
    return ViewVectors(
        model_id=model_id,
        dim=int(matrix.shape[1]),
        units=[int(u) for u in units],
        vectors=matrix.tobytes(),
        dtype=STORED_DTYPE,
    )


def unpack(views: ViewVectors) -> tuple[np.ndarray, np.ndarray]:
    """The stored form -> (float32 vectors, unit indices). A malformed entry raises ValueError."""
    if views.dtype not in ("float16", "float32"):
        raise ValueError(f"view vectors of dtype {views.dtype!r}: expected float16 or float32")
    dtype = np.dtype("<f2" if views.dtype == "float16" else "<f4")
    count = len(views.units)
    if views.dim <= 0 or len(views.vectors) != count * views.dim * dtype.itemsize:
        raise ValueError(f"view vectors hold {len(views.vectors)} bytes, not {count} x {views.dim} {views.dtype}")
    matrix = np.frombuffer(views.vectors, dtype=dtype).reshape(count, views.dim).astype(np.float32)
    return matrix, np.asarray(views.units, dtype=np.int64)


def attach_views(embedder: Embedder, chunks: list[Chunk]) -> None:
    """Sets each chunk's `views` to its stored-form view vectors under the embedder's model."""
    model_id = embedder.spec.model_id
    for chunk, (vectors, units) in zip(chunks, embed_views(embedder, chunks), strict=True):
        chunk.views = pack(model_id, vectors, units)
