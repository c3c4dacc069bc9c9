"""Domain objects shared by the stages. They know nothing of protobuf or gRPC (see shared/convert.py)."""

import dataclasses
from datetime import UTC, datetime

from shared.errors import InvalidArgument


@dataclasses.dataclass
class DocumentMeta:
    tenant_id: str
    document_id: str
    version: str = "1"
    access_scopes: list[str] = dataclasses.field(default_factory=lambda: ["public"])
    effective_from: str = ""
    effective_to: str = ""
    source_uri: str = ""
    content_type: str = ""
    title: str = ""
    source_sha256: str = ""


@dataclasses.dataclass
class ViewVectors:
    """A chunk's scoring views (shared/embedding/views.py) embedded at ingest, so the maxsim reranker reads
    them instead of embedding at query time. `vectors` is row-major (len(units) x dim) little-endian
    `dtype` bytes; `units[i]` is the answer unit view i reads (-1: the section title)."""

    model_id: str
    dim: int
    units: list[int]
    vectors: bytes
    dtype: str = "float16"


@dataclasses.dataclass
class Chunk:
    chunk_id: str
    meta: DocumentMeta
    heading_path: list[str]
    body: str
    embed_text: str
    char_start: int
    char_end: int
    parent_section_id: str
    token_count: int
    position: int
    section_text: str = ""
    embedding_model_id: str = ""
    # Stored view vectors, when the index holds them (None: the reranker embeds the views itself).
    views: ViewVectors | None = None


@dataclasses.dataclass
class StageScores:
    bm25_rank: int = 0
    bm25_score: float = 0.0
    dense_rank: int = 0
    dense_score: float = 0.0
    fused_rank: int = 0
    fused_score: float = 0.0
    rerank_rank: int = 0
    rerank_score: float = 0.0
    # Bi-encoder similarity of the query with each answer unit (shared.text.answer_units order), NaN where a
    # unit has no view; empty when the reranker did not compute them (cross-encoder, passthrough).
    unit_similarity: list[float] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class ScoredChunk:
    chunk: Chunk
    scores: StageScores


@dataclasses.dataclass
class SearchFilters:
    access_scopes: list[str] = dataclasses.field(default_factory=list)
    as_of: str = ""
    include_superseded: bool = False
    document_ids: list[str] = dataclasses.field(default_factory=list)
    content_types: list[str] = dataclasses.field(default_factory=list)
    exclude_document_ids: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Citation:
    chunk_id: str
    char_start: int
    char_end: int
    quote: str
    document_id: str = ""
    version: str = ""
    heading_path: list[str] = dataclasses.field(default_factory=list)
    title: str = ""  # the cited document's


@dataclasses.dataclass
class Answer:
    text: str
    citations: list[Citation]
    abstained: bool
    missing: str = ""
    reason: str = ""
    generator_id: str = ""
    coverage: float = 0.0  # share of the question's content words the best answering unit covers (extractive)


PUBLIC_SCOPE = "public"
# How the retriever searches; the wire form is the generated RetrievalMode enum (shared.convert maps it).
RETRIEVAL_MODES = ("hybrid", "bm25", "dense")


def visible_scopes(requested: list[str]) -> list[str]:
    """Every caller may read public chunks; other scopes only when the caller holds them."""
    return sorted({PUBLIC_SCOPE, *[s for s in requested if s]})


def normalize_time(value: str, field: str) -> str:
    """ISO date or timestamp -> 'YYYY-MM-DDTHH:MM:SSZ' (UTC), so strings compare in time order."""
    if not value:
        return ""
    text = value.strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidArgument(field, f"{value!r} is not an ISO-8601 date or timestamp") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
