"""What `ragmesh ask` and `ragmesh search` print: suggested reading in the order of the score shown, no
rerank column for passages nobody reranked, and --open marking the cited span, not the whole chunk."""

from services.cli.render import cited_span, render_answer, render_chunk_view, render_results
from shared.stubs import common_pb2, gateway_pb2

SECTION = "## Refunds\n\nIntro line. Refunds are paid within 14 days. Ask support for more.\n"
BODY = "Refunds are paid within 14 days. Ask support for more."
DOC_OFFSET = 500  # where the section starts in its document


def chunk(chunk_id="c1", body=BODY):
    start = DOC_OFFSET + SECTION.index(body)
    return common_pb2.Chunk(
        chunk_id=chunk_id,
        body=body,
        section_text=SECTION,
        char_start=start,
        char_end=start + len(body),
        meta=common_pb2.DocumentMeta(document_id="handbook", version="2"),
    )


def scored(chunk_id, rerank_rank, rerank_score, fused_score=0.01):
    return common_pb2.ScoredChunk(
        chunk=chunk(chunk_id),
        scores=common_pb2.StageScores(
            fused_rank=1, fused_score=fused_score, rerank_rank=rerank_rank, rerank_score=rerank_score
        ),
    )


def test_suggested_reading_is_sorted_by_the_score_it_prints():
    response = gateway_pb2.AskResponse(
        answer=common_pb2.Answer(abstained=True, reason="below_threshold"),
        suggested_reading=[scored("a", 1, 0.51), scored("b", 2, 0.74), scored("c", 3, 0.62)],
    )
    lines = [line for line in render_answer(response).splitlines() if line.startswith("  - ")]
    assert [line.split()[1] for line in lines] == ["b", "c", "a"]
    assert [line.rsplit("(", 1)[1] for line in lines] == ["rerank 0.740)", "rerank 0.620)", "rerank 0.510)"]


def test_degraded_suggested_reading_prints_and_sorts_by_the_fused_score():
    response = gateway_pb2.AskResponse(
        answer=common_pb2.Answer(abstained=True),
        degraded=True,
        suggested_reading=[scored("a", 0, 0, 0.016), scored("b", 0, 0, 0.032)],
    )
    lines = [line for line in render_answer(response).splitlines() if line.startswith("  - ")]
    assert [line.split()[1] for line in lines] == ["b", "a"]
    assert lines[0].endswith("(fused 0.0320)") and "rerank" not in "".join(lines)


def test_an_answer_searched_in_past_versions_says_so_first():
    searched = "versions in force at 2025-12-31T23:59:59Z (the question says '2025')"
    response = gateway_pb2.AskResponse(
        answer=common_pb2.Answer(text="Paid within 14 days. [1]"), time_reference=searched
    )
    assert render_answer(response).splitlines()[0] == f"(searched: {searched})"
    assert "searched" not in render_answer(gateway_pb2.AskResponse(answer=common_pb2.Answer(text="x [1]")))


def test_search_shows_no_rerank_column_for_passages_nobody_reranked():
    out = render_results([scored("a", 0, 0.0)])
    assert "rerank" not in out and "#0" not in out
    assert "rerank #1 0.900" in render_results([scored("a", 1, 0.9)])


def test_open_marks_the_cited_span_not_the_whole_chunk():
    quote = "paid within 14 days"
    c = chunk()
    view = gateway_pb2.ChunkView(
        chunk=c, highlight_start=SECTION.index(BODY), highlight_end=SECTION.index(BODY) + len(BODY)
    )
    at = DOC_OFFSET + SECTION.index(quote)
    citation = common_pb2.Citation(chunk_id="c1", char_start=at, char_end=at + len(quote), quote=quote)
    out = render_chunk_view(view, citation)
    assert ">>>paid within 14 days<<<" in out
    assert "Refunds are >>>" in out
    # Without a citation, or with offsets that do not hold the quote, the quote is found in the chunk; a quote
    # that is not in the chunk at all falls back to the whole chunk.
    assert f">>>{BODY}<<<" in render_chunk_view(view)
    shifted = common_pb2.Citation(char_start=at + 3, char_end=at + 3 + len(quote), quote=quote)
    assert cited_span(view, shifted) == (SECTION.index(quote), SECTION.index(quote) + len(quote))
    elsewhere = common_pb2.Citation(char_start=at, char_end=at + 5, quote="Intro")
    assert cited_span(view, elsewhere) == (view.highlight_start, view.highlight_end)


def test_a_citation_names_its_document_when_it_has_no_heading():
    """A plain-text document has no headings: its citation line showed an id and nothing else
    ('pricing/discounts@2025' and a blank where others show 'Price List > Plans')."""
    cited = common_pb2.Citation(
        chunk_id="c1", document_id="pricing/discounts", version="2025", quote="x", title="Discount Programs"
    )
    nested = common_pb2.Citation(
        chunk_id="c2", document_id="p", version="1", quote="y", title="Price List", heading_path=["Price List", "Plans"]
    )
    out = render_answer(
        gateway_pb2.AskResponse(answer=common_pb2.Answer(text="x [1] y [2]", citations=[cited, nested]))
    )
    assert "  [1] c1  pricing/discounts@2025  Discount Programs" in out
    assert "  [2] c2  p@1  Price List > Plans" in out


def test_a_message_answered_in_part_names_what_to_read_for_the_questions_not_found():
    """A message of several questions (AskResponse.parts): a part not found keeps its closest passages."""
    response = gateway_pb2.AskResponse(
        answer=common_pb2.Answer(
            text="1. refunds\nPaid within 14 days. [1]\n\n2. berlin office\nNot found in the documents."
        ),
        suggested_reading=[scored("near", 1, 0.57)],
    )
    lines = render_answer(response).splitlines()
    at = lines.index("Suggested reading for the questions not found:")
    assert lines[at + 1].split()[1] == "near" and lines[at + 1].endswith("(rerank 0.570)")
    assert "Suggested" not in render_answer(gateway_pb2.AskResponse(answer=common_pb2.Answer(text="x [1]")))
