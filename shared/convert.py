"""Protobuf <-> domain objects. The only place that knows both shapes."""

import numpy as np
from google.protobuf.json_format import ParseDict

from shared import model
from shared.stubs import common_pb2, retriever_pb2


def meta_from_pb(pb: common_pb2.DocumentMeta) -> model.DocumentMeta:
    return model.DocumentMeta(
        tenant_id=pb.tenant_id,
        document_id=pb.document_id,
        version=pb.version,
        access_scopes=list(pb.access_scopes),
        effective_from=pb.effective_from,
        effective_to=pb.effective_to,
        source_uri=pb.source_uri,
        content_type=pb.content_type,
        title=pb.title,
        source_sha256=pb.source_sha256,
    )


def meta_to_pb(meta: model.DocumentMeta) -> common_pb2.DocumentMeta:
    return common_pb2.DocumentMeta(
        tenant_id=meta.tenant_id,
        document_id=meta.document_id,
        version=meta.version,
        access_scopes=meta.access_scopes,
        effective_from=meta.effective_from,
        effective_to=meta.effective_to,
        source_uri=meta.source_uri,
        content_type=meta.content_type,
        title=meta.title,
        source_sha256=meta.source_sha256,
    )


def chunk_from_pb(pb: common_pb2.Chunk) -> model.Chunk:
    return model.Chunk(
        chunk_id=pb.chunk_id,
        meta=meta_from_pb(pb.meta),
        heading_path=list(pb.heading_path),
        body=pb.body,
        embed_text=pb.embed_text,
        char_start=pb.char_start,
        char_end=pb.char_end,
        parent_section_id=pb.parent_section_id,
        token_count=pb.token_count,
        position=pb.position,
        section_text=pb.section_text,
        embedding_model_id=pb.embedding_model_id,
        views=views_from_pb(pb.views) if pb.HasField("views") else None,
    )


def views_from_pb(pb: common_pb2.ViewVectors) -> model.ViewVectors:
    return model.ViewVectors(
        model_id=pb.model_id, dim=pb.dim, units=list(pb.unit_indices), vectors=pb.vectors, dtype=pb.dtype
    )


def views_to_pb(views: model.ViewVectors) -> common_pb2.ViewVectors:
    return common_pb2.ViewVectors(
        model_id=views.model_id, dtype=views.dtype, dim=views.dim, vectors=views.vectors, unit_indices=views.units
    )


def query_embedding_to_pb(model_id: str, vector: np.ndarray) -> common_pb2.QueryEmbedding:
    data = np.ascontiguousarray(vector, dtype="<f4")
    return common_pb2.QueryEmbedding(model_id=model_id, dtype="float32", dim=int(data.shape[0]), vector=data.tobytes())


def query_vector_from_pb(pb: common_pb2.QueryEmbedding, model_id: str) -> np.ndarray | None:
    """The query vector when `pb` holds one of `model_id` in a form this code reads; None otherwise (the
    receiver embeds the query itself)."""
    if pb.model_id != model_id or pb.dtype != "float32" or pb.dim <= 0 or len(pb.vector) != 4 * pb.dim:
        return None
    return np.frombuffer(pb.vector, dtype="<f4").astype(np.float32)


def chunk_to_pb(chunk: model.Chunk) -> common_pb2.Chunk:
    return common_pb2.Chunk(
        chunk_id=chunk.chunk_id,
        meta=meta_to_pb(chunk.meta),
        heading_path=chunk.heading_path,
        body=chunk.body,
        embed_text=chunk.embed_text,
        char_start=chunk.char_start,
        char_end=chunk.char_end,
        parent_section_id=chunk.parent_section_id,
        token_count=chunk.token_count,
        position=chunk.position,
        section_text=chunk.section_text,
        embedding_model_id=chunk.embedding_model_id,
        views=views_to_pb(chunk.views) if chunk.views is not None else None,
    )


def scores_from_pb(pb: common_pb2.StageScores) -> model.StageScores:
    return model.StageScores(
        bm25_rank=pb.bm25_rank,
        bm25_score=pb.bm25_score,
        dense_rank=pb.dense_rank,
        dense_score=pb.dense_score,
        fused_rank=pb.fused_rank,
        fused_score=pb.fused_score,
        rerank_rank=pb.rerank_rank,
        rerank_score=pb.rerank_score,
        unit_similarity=list(pb.unit_similarity),
    )


def scores_to_pb(s: model.StageScores) -> common_pb2.StageScores:
    return common_pb2.StageScores(
        bm25_rank=s.bm25_rank,
        bm25_score=s.bm25_score,
        dense_rank=s.dense_rank,
        dense_score=s.dense_score,
        fused_rank=s.fused_rank,
        fused_score=s.fused_score,
        rerank_rank=s.rerank_rank,
        rerank_score=s.rerank_score,
        unit_similarity=s.unit_similarity,
    )


def scored_from_pb(pb: common_pb2.ScoredChunk) -> model.ScoredChunk:
    return model.ScoredChunk(chunk=chunk_from_pb(pb.chunk), scores=scores_from_pb(pb.scores))


def scored_from_json(recorded: dict) -> model.ScoredChunk:
    """A passage as a recorded context holds it: the ScoredChunk message in protobuf's JSON form."""
    return scored_from_pb(ParseDict(recorded, common_pb2.ScoredChunk()))


def scored_to_pb(sc: model.ScoredChunk) -> common_pb2.ScoredChunk:
    return common_pb2.ScoredChunk(chunk=chunk_to_pb(sc.chunk), scores=scores_to_pb(sc.scores))


def ranking_to_pb(sc: model.ScoredChunk) -> common_pb2.ScoredChunk:
    """The candidate's scores under its chunk id alone, for a caller that holds the chunk itself."""
    return common_pb2.ScoredChunk(chunk=common_pb2.Chunk(chunk_id=sc.chunk.chunk_id), scores=scores_to_pb(sc.scores))


def filters_from_pb(pb: common_pb2.SearchFilters) -> model.SearchFilters:
    return model.SearchFilters(
        access_scopes=list(pb.access_scopes),
        as_of=pb.as_of,
        include_superseded=pb.include_superseded,
        document_ids=list(pb.document_ids),
        content_types=list(pb.content_types),
        exclude_document_ids=list(pb.exclude_document_ids),
    )


def answer_to_pb(answer: model.Answer) -> common_pb2.Answer:
    return common_pb2.Answer(
        text=answer.text,
        abstained=answer.abstained,
        missing=answer.missing,
        reason=answer.reason,
        generator_id=answer.generator_id,
        coverage=answer.coverage,
        citations=[
            common_pb2.Citation(
                chunk_id=c.chunk_id,
                char_start=c.char_start,
                char_end=c.char_end,
                quote=c.quote,
                document_id=c.document_id,
                version=c.version,
                heading_path=c.heading_path,
                title=c.title,
            )
            for c in answer.citations
        ],
    )


def mode_to_pb(mode: str) -> retriever_pb2.RetrievalMode:
    """A retrieval mode's name ("hybrid", "bm25", "dense") as the generated RetrievalMode enum value."""
    if mode not in model.RETRIEVAL_MODES:
        raise ValueError(f"{mode!r} is not a retrieval mode: one of {', '.join(model.RETRIEVAL_MODES)}")
    return retriever_pb2.RetrievalMode.Value(f"RETRIEVAL_MODE_{mode.upper()}")


def mode_from_pb(value: int) -> str | None:
    """The mode's name; unspecified (0) means hybrid. None for a number the enum does not define (proto3
    enums are open: an unknown number arrives as itself)."""
    if value == retriever_pb2.RETRIEVAL_MODE_UNSPECIFIED:
        return "hybrid"
    try:
        name = retriever_pb2.RetrievalMode.Name(value)
    except ValueError:
        return None
    return name.removeprefix("RETRIEVAL_MODE_").lower()


def describe_modes() -> str:
    """The enum's numbers and names, for an error message: "0 = unspecified (hybrid), 1 = hybrid, ..."."""
    return ", ".join(
        f"{number} = {mode_from_pb(number) if number else 'unspecified (hybrid)'}"
        for number in retriever_pb2.RetrievalMode.values()
    )
