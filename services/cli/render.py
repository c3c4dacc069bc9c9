"""Human-readable output of answers and search results."""

from shared.stubs import common_pb2, gateway_pb2
from shared.text import heading_prefix


def _path(chunk: common_pb2.Chunk) -> str:
    return heading_prefix(chunk.meta.title, list(chunk.heading_path))


def _one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _by_printed_score(passages) -> list[tuple[common_pb2.ScoredChunk, str]]:
    """Passages with the score shown for each, best first by that score: the rerank score when they were
    reranked, else (a degraded answer) the fused score."""
    reranked = any(sc.scores.rerank_rank for sc in passages)
    key = (lambda sc: sc.scores.rerank_score) if reranked else (lambda sc: sc.scores.fused_score)
    label = "rerank {:.3f}" if reranked else "fused {:.4f}"
    return [(sc, label.format(key(sc))) for sc in sorted(passages, key=key, reverse=True)]


def render_answer(response: gateway_pb2.AskResponse) -> str:
    out = []
    answer = response.answer
    if response.degraded:
        out.append(f"(degraded: {response.degraded_reason})")
    if response.time_reference:
        out.append(f"(searched: {response.time_reference})")
    if response.read_as:
        out.append(f"(read as: {response.read_as})")
    if answer.abstained:
        out.append(f"No answer: {answer.missing or 'the corpus does not answer this'} [{answer.reason}]")
        out += _suggested(response.suggested_reading, "Suggested reading:")
        return "\n".join(out)
    out.append(answer.text)
    out.append("Citations:")
    for i, cite in enumerate(answer.citations, start=1):
        path = heading_prefix(cite.title, list(cite.heading_path))
        out.append(f"  [{i}] {cite.chunk_id}  {cite.document_id}@{cite.version}  {path}")
        out.append(f'      chars {cite.char_start}-{cite.char_end}: "{_one_line(cite.quote)}"')
    # A message of several questions answered in part: what to read for the parts not found.
    out += _suggested(response.suggested_reading, "Suggested reading for the questions not found:")
    out.append(
        f"(reranker {response.reranker_model_id or 'none'}, top score {response.top_rerank_score:.3f}, "
        f"threshold {response.abstain_threshold:.3f})"
    )
    return "\n".join(out)


def _suggested(passages, title: str) -> list[str]:
    if not passages:
        return []
    return [title] + [
        f"  - {sc.chunk.chunk_id}  {sc.chunk.meta.document_id}@{sc.chunk.meta.version}  {_path(sc.chunk)}  ({score})"
        for sc, score in _by_printed_score(passages)
    ]


def render_results(results) -> str:
    lines = []
    for rank, sc in enumerate(results, start=1):
        s = sc.scores
        lines.append(
            f"{rank:>2}. {sc.chunk.chunk_id}  {sc.chunk.meta.document_id}@{sc.chunk.meta.version}  {_path(sc.chunk)}"
        )
        stages = [
            f"bm25 #{s.bm25_rank} {s.bm25_score:.3f}" if s.bm25_rank else "bm25 -",
            f"dense #{s.dense_rank} {s.dense_score:.3f}" if s.dense_rank else "dense -",
            f"fused #{s.fused_rank} {s.fused_score:.4f}",
        ]
        if s.rerank_rank:  # 0 = not reranked: nothing to show
            stages.append(f"rerank #{s.rerank_rank} {s.rerank_score:.3f}")
        lines.append("    " + " | ".join(stages))
        lines.append(f"    {_one_line(sc.chunk.body)}")
    return "\n".join(lines)


def cited_span(view: gateway_pb2.ChunkView, citation: common_pb2.Citation | None) -> tuple[int, int]:
    """Where the cited text lies in the chunk's section: the citation's document span moved by the chunk's
    own offsets, checked against the quote (else the quote's first place inside the chunk); the whole
    chunk when there is no citation or its quote is not in the chunk."""
    start, end = view.highlight_start, view.highlight_end
    if citation is None or not citation.quote:
        return start, end
    section, quote = view.chunk.section_text, citation.quote
    at = start + citation.char_start - view.chunk.char_start
    if 0 <= at and section[at : at + len(quote)] == quote:
        return at, at + len(quote)
    found = section.find(quote, start, end)
    return (found, found + len(quote)) if found >= 0 else (start, end)


def render_chunk_view(view: gateway_pb2.ChunkView, citation: common_pb2.Citation | None = None) -> str:
    """The chunk's section with the cited span (the whole chunk without a citation) between >>> and <<<."""
    chunk = view.chunk
    section = chunk.section_text
    start, end = cited_span(view, citation)
    marked = section[:start] + ">>>" + section[start:end] + "<<<" + section[end:]
    return (
        f"{chunk.chunk_id}  {chunk.meta.document_id}@{chunk.meta.version}  {_path(chunk)}\n"
        f"source chars {chunk.char_start}-{chunk.char_end}\n{marked}"
    )


def render_documents(documents) -> str:
    """One line per stored version: id@version, chunks, validity, scopes, then its source and title."""
    if not documents:
        return "no documents stored for the tenant (or in a scope your key holds)"
    lines = []
    for d in documents:
        # 1970-01-01 is the chunker's default start: the document states no date.
        start = "undated" if d.effective_from.startswith("1970-01-01") else d.effective_from[:10]
        valid = f"{start} .. {d.effective_to[:10] if d.effective_to else 'open'}"
        lines.append(
            f"{d.document_id}@{d.version}  {d.chunks} chunks  valid {valid}  scopes {','.join(d.access_scopes)}"
        )
        lines.append(f"    {d.source_uri}  {_one_line(d.title, 80)!r}")
    lines.append(f"{len({d.document_id for d in documents})} documents, {len(documents)} versions")
    return "\n".join(lines)
