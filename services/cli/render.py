"""Human-readable output of answers and search results."""

from shared.stubs import common_pb2, gateway_pb2
from shared.text import heading_prefix


def _path(chunk: common_pb2.Chunk) -> str:
    return heading_prefix(chunk.meta.title, list(chunk.heading_path))


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render_answer(response: gateway_pb2.AskResponse) -> str:
    out = []
    answer = response.answer
    if response.degraded:
        out.append(f"(degraded: {response.degraded_reason})")
    if answer.abstained:
        out.append(f"No answer: {answer.missing or 'the corpus does not answer this'} [{answer.reason}]")
        if response.suggested_reading:
            out.append("Suggested reading:")
            for sc in response.suggested_reading:
                out.append(f"  - {sc.chunk.chunk_id}  {sc.chunk.meta.document_id}@{sc.chunk.meta.version}  "
                           f"{_path(sc.chunk)}  (rerank {sc.scores.rerank_score:.3f})")
        return "\n".join(out)
    out.append(answer.text)
    out.append("Citations:")
    for i, cite in enumerate(answer.citations, start=1):
        path = " > ".join(cite.heading_path)
        out.append(f"  [{i}] {cite.chunk_id}  {cite.document_id}@{cite.version}  {path}")
        out.append(f"      chars {cite.char_start}-{cite.char_end}: \"{_one_line(cite.quote)}\"")
    out.append(f"(reranker {response.reranker_model_id or 'none'}, top score {response.top_rerank_score:.3f}, "
               f"threshold {response.abstain_threshold:.3f})")
    return "\n".join(out)


def render_results(results) -> str:
    lines = []
    for rank, sc in enumerate(results, start=1):
        s = sc.scores
        lines.append(f"{rank:>2}. {sc.chunk.chunk_id}  {sc.chunk.meta.document_id}@{sc.chunk.meta.version}  "
                     f"{_path(sc.chunk)}")
        lines.append(f"    bm25 #{s.bm25_rank} {s.bm25_score:.3f} | dense #{s.dense_rank} {s.dense_score:.3f} | "
                     f"fused #{s.fused_rank} {s.fused_score:.4f} | rerank #{s.rerank_rank} {s.rerank_score:.3f}")
        lines.append(f"    {_one_line(sc.chunk.body)}")
    return "\n".join(lines)


def render_chunk_view(view: gateway_pb2.ChunkView) -> str:
    chunk = view.chunk
    section = chunk.section_text
    marked = (section[: view.highlight_start] + ">>>" + section[view.highlight_start: view.highlight_end] + "<<<"
              + section[view.highlight_end:])
    return (f"{chunk.chunk_id}  {chunk.meta.document_id}@{chunk.meta.version}  {_path(chunk)}\n"
            f"source chars {chunk.char_start}-{chunk.char_end}\n{marked}")
