"""Properties over generated structured Markdown: nothing dropped, exact slices, the window respected,
tables never apart from their header and headings never apart from what they head."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.chunker import chunking
from services.chunker.chunking import MIN_ROW_TOKENS
from services.chunker.formats.text import parse_markdown_file
from services.chunker.structure import parse_markdown
from tests.unit.chunker.documents import check_invariants, run

WORDS = st.sampled_from(
    "refund policy storage plan seat invoice region the a of within days customer Northwind v2.1.0 3.14 "
    "e.g. U.S. `nwctl sync` $2,990 E-4412 50% Dr. approval quarterly über naïve 東京".split()
)


@st.composite
def sentence(draw):
    words = draw(st.lists(WORDS, min_size=1, max_size=25))
    return words[0].capitalize() + " " + " ".join(words[1:]) + draw(st.sampled_from([".", "!", "?", ":"]))


@st.composite
def paragraph(draw):
    # Up to 60 sentences: some paragraphs are far bigger than the window and must be split.
    return " ".join(draw(st.lists(sentence(), min_size=1, max_size=draw(st.sampled_from([3, 8, 60])))))


@st.composite
def heading(draw):
    level = draw(st.integers(1, 4))
    number = draw(st.sampled_from(["", "7. ", "7.2 ", "12.4.1 "]))
    return "#" * level + " " + number + " ".join(draw(st.lists(WORDS, min_size=1, max_size=6)))


@st.composite
def list_block(draw):
    marker = draw(st.sampled_from(["-", "*", "1.", "1.1", "(a)"]))
    items = draw(st.lists(st.lists(WORDS, min_size=1, max_size=30), min_size=1, max_size=6))
    return "\n".join(f"{marker} {' '.join(item)}" for item in items)


@st.composite
def table(draw):
    cols = draw(st.integers(2, 5))
    cell = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)
    header = draw(st.lists(cell, min_size=cols, max_size=cols))
    rows = draw(st.lists(st.lists(cell, min_size=cols, max_size=cols), min_size=1, max_size=40))
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(["---"] * cols) + " |"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


@st.composite
def code(draw):
    lines = draw(st.lists(st.lists(WORDS, max_size=12).map(" ".join), min_size=1, max_size=30))
    return "```\n" + "\n".join(lines) + "\n```"


@st.composite
def markdown(draw):
    blocks = draw(st.lists(st.one_of(heading(), paragraph(), list_block(), table(), code()), min_size=1, max_size=12))
    front = draw(st.sampled_from(["", "---\ndoc_id: generated\nversion: 3\n---\n"]))
    return front + "\n\n".join(blocks) + draw(st.sampled_from(["", "\n", "\n\n"]))


# No example database: the run leaves no .hypothesis/ folder in the work tree; a failure prints its example.
PROPERTY = settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _table_rows(text: str):
    """(header line, block) of every pipe table in the text."""
    parsed = parse_markdown_file(text.encode(), "g.md")
    for section in parsed.sections:
        for block in section.blocks:
            if block.kind == "table":
                header = text[block.start : text.index("\n", block.start)]
                yield header, block


@PROPERTY
@given(doc=markdown())
def test_structure_chunks_drop_nothing_are_exact_slices_and_fit(small_chunker, doc):
    _, chunks = run(small_chunker, doc, uri="g.md")
    text = check_invariants(small_chunker, doc.encode(), "g.md", chunks)
    for header, block in _table_rows(text):
        if small_chunker.counter.count(header) > small_chunker.max_tokens // 2:
            continue  # a header that would crowd out the rows is deliberately not repeated
        for chunk in chunks:
            if chunk.char_start < block.end and chunk.char_end > block.header_end:  # holds table rows
                if header in chunk.embed_text:
                    continue
                # Not repeated only when the heading prefix and the header would leave rows no room.
                prefix = chunk.embed_text.split("\n", 1)[0] if chunk.embed_text != chunk.body else ""
                count = small_chunker.counter.count
                assert count(prefix) + count(header) + MIN_ROW_TOKENS > small_chunker.max_tokens, chunk
    # A heading is packed with the start of what it heads (when the two fit in a window at all).
    sections = parse_markdown_file(doc.encode(), "g.md").sections
    for k, section in enumerate(sections):
        if len(section.blocks) < 2 or section.blocks[0].kind != "heading" or section.blocks[1].kind == "heading":
            continue
        if k > 0 and not sections[k - 1].has_content:
            continue  # parent headings ride along too; coverage above already holds them
        head, first = section.blocks[0], section.blocks[1]
        chunk = next(c for c in chunks if c.char_start <= first.start < c.char_end)
        prefix = chunk.embed_text[: len(chunk.embed_text) - len(chunk.body)]
        if small_chunker.counter.count(prefix + text[head.start : first.end]) + 8 <= small_chunker.max_tokens:
            assert chunk.char_start <= head.start, (text[head.start : head.end], chunk.body)


@PROPERTY
@given(doc=markdown())
def test_fixed_windows_drop_nothing_are_exact_slices_and_fit(fixed_chunker, doc):
    _, chunks = run(fixed_chunker, doc, uri="g.md")
    check_invariants(fixed_chunker, doc.encode(), "g.md", chunks)
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert prev.char_start < nxt.char_start and prev.char_end < nxt.char_end


@PROPERTY
@given(doc=markdown())
def test_every_non_blank_markdown_line_belongs_to_a_block(doc):
    body_start = doc.index("---\n", 4) + 4 if doc.startswith("---\n") else 0
    covered = set()
    for section in parse_markdown(doc, body_start):
        for block in section.blocks:
            covered |= set(range(block.start, block.end))
            assert doc[block.start : block.end].strip()
    assert all(i in covered for i in range(body_start, len(doc)) if not doc[i].isspace())


@PROPERTY
@given(doc=markdown())
def test_packing_from_one_tokenization_cuts_where_counting_each_unit_does(small_chunker, doc):
    """The packer reads the tokens a unit adds from one tokenization of its section and counts only the cut
    exactly; the chunks (ids, spans, token counts) are those of counting the growing piece for every unit."""
    _, fast = run(small_chunker, doc, uri="g.md")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chunking, "token_starts", lambda *args: None)  # no reading ahead: every unit counted
        _, exact = run(small_chunker, doc, uri="g.md")
    assert [(c.chunk_id, c.char_start, c.char_end, c.token_count) for c in fast] == [
        (c.chunk_id, c.char_start, c.char_end, c.token_count) for c in exact
    ]
