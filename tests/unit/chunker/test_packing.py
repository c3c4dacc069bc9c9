"""Packing rules: tables keep their header, clauses keep their heading, overlap always advances,
and the fixed-window baseline."""

import pytest

from services.chunker.chunking import SectionPacker
from services.chunker.fixed import FixedWindows
from services.chunker.server import ChunkerConfig
from services.chunker.structure import Block, Section
from shared import config
from tests.support.chunker import make_chunker
from tests.unit.chunker.documents import check_invariants, run


def test_a_table_is_never_split_from_its_header(small_chunker):
    rows = "\n".join(f"| R{i} | {i * 7} GB | region eu-central |" for i in range(30))
    doc = (
        "# Quotas\n\nStorage quotas per region are listed below.\n\n"
        f"| Plan | Quota | Where |\n| --- | --- | --- |\n{rows}\n"
    )
    _, chunks = run(small_chunker, doc)
    check_invariants(small_chunker, doc.encode(), "doc.md", chunks)
    with_rows = [c for c in chunks if "| R" in c.body]
    assert len(with_rows) > 2
    for chunk in with_rows:
        assert chunk.embed_text.count("| Plan | Quota | Where |") == 1
    # The header itself never sits alone at the end of a chunk: it travels with the first row.
    assert not any(c.body.rstrip().endswith(("| Plan | Quota | Where |", "| --- | --- | --- |")) for c in chunks)


CONTRACT = """# Agreement

## 7. Limitation of Liability

7.1 Except for breaches of Clause 5, each party's total aggregate liability under this Agreement is limited \
to the fees paid or payable by Customer in the 12 months before the event giving rise to the claim. {filler}

7.2 Neither party is liable for indirect, incidental, consequential or punitive damages. {filler}

## 8. General

8.1 Governing law. This Agreement is governed by the laws of the State of New York.
"""


@pytest.mark.parametrize("filler_sentences", [0, 3, 30])
def test_a_numbered_clause_is_never_separated_from_its_heading(small_chunker, filler_sentences):
    filler = " ".join(f"Sentence {i} adds more detail to this clause." for i in range(filler_sentences))
    doc = CONTRACT.format(filler=filler)
    _, chunks = run(small_chunker, doc)
    check_invariants(small_chunker, doc.encode(), "doc.md", chunks)
    first = next(c for c in chunks if "7.1 Except" in c.body)
    assert "## 7. Limitation of Liability" in first.body
    for chunk in chunks:
        if "7.1" in chunk.body or "7.2" in chunk.body:
            assert chunk.heading_path == ["Agreement", "7. Limitation of Liability"]
            assert "7. Limitation of Liability" in chunk.embed_text.split("\n", 1)[0]
    assert "## 8. General" in next(c for c in chunks if "8.1 Governing" in c.body).body
    # No chunk ends on a heading.
    assert not any(c.body.rstrip().splitlines()[-1].startswith("#") for c in chunks[:-1])


def test_a_lead_in_line_stays_with_what_it_introduces(small_chunker):
    items = "\n".join(f"- item {i} with a reasonably long description of what it covers" for i in range(12))
    doc = f"# Scope\n\n{'Some context sentence here. ' * 12}\n\n5.3 Every consultant has:\n\n{items}\n"
    _, chunks = run(small_chunker, doc)
    check_invariants(small_chunker, doc.encode(), "doc.md", chunks)
    lead = next(c for c in chunks if "5.3 Every consultant has:" in c.body)
    assert "- item 0" in lead.body


def _packer(chunker, overlap_ratio):
    return SectionPacker(chunker.counter, chunker.max_tokens, overlap_ratio)


@pytest.mark.parametrize("overlap_ratio", [0.12, 0.5, 0.95])
def test_overlap_never_stalls_or_skips_when_a_boundary_snaps_back(small_chunker, overlap_ratio):
    """Sentences of very different sizes (one nearly a window, one longer than a window, many tiny)
    are where a cut that snaps back to a sentence boundary could land at or before the previous
    start. Every piece must start after the previous one started and end after it ended."""
    long = "word " * 40 + "end."
    huge = "x" + "y " * 150 + "z."
    text = " ".join(["Tiny.", long, "Small one.", huge, "Ok.", "Ok again.", long, "Tiny."] * 3)
    packer = _packer(small_chunker, overlap_ratio)
    section = Section(heading_path=[], level=0, blocks=[Block("paragraph", 0, len(text))])
    pieces = packer.pack(text, "", section, None)
    assert len(pieces) < 4 * len(text.split("."))
    covered = set()
    for (s1, e1, _), (s2, e2, _) in zip(pieces, pieces[1:], strict=False):
        assert s2 > s1 and e2 > e1  # advances
        assert not text[e1:s2].strip()  # and skips nothing: overlapping, or only whitespace between
    for s, e, embed in pieces:
        assert small_chunker.counter.count(embed) <= small_chunker.max_tokens
        covered |= set(range(s, e))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


@pytest.mark.parametrize(
    "text",
    [
        "a" * 5000,  # one "word" far longer than a window: snapping back to its start would stall
        "Tokenization " * 400,
        "supercalifragilistic" * 200 + " tail",
    ],
)
@pytest.mark.parametrize("overlap_ratio", [0.0, 0.12, 0.9])
def test_fixed_windows_always_advance_and_cover_everything(fixed_chunker, text, overlap_ratio):
    windows = FixedWindows(fixed_chunker.counter, 64, overlap_ratio)
    spans = windows.spans(text)
    for (s1, e1), (s2, e2) in zip(spans, spans[1:], strict=False):
        assert s2 > s1 and e2 > e1 and not text[e1:s2].strip()
    covered = set()
    for s, e in spans:
        assert fixed_chunker.counter.count(text[s:e]) <= 64
        covered |= set(range(s, e))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_fixed_windows_do_not_cut_words_and_overlap(fixed_chunker):
    text = " ".join(f"Sentence {i} mentions tokenization and internationalization." for i in range(200))
    spans = FixedWindows(fixed_chunker.counter, 64, 0.12).spans(text)
    for s, e in spans:
        assert text[s - 1 : s] in ("", " ") and text[e : e + 1] in ("", " ", ".")
    assert all(s2 < e1 for (_, e1), (s2, _) in zip(spans, spans[1:], strict=False))


def test_fixed_strategy_is_structure_blind_and_capped_at_the_model_window(fixed_chunker):
    # 512 is the common default; the embedder reads 256 tokens, so the baseline gets 256 (see fixed.py).
    assert fixed_chunker.max_tokens == 256 and fixed_chunker.chunker_id == "fixed-256"
    doc = "---\ndoc_id: x\n---\n# Title\n\n" + " ".join(f"Line {i} of the policy text." for i in range(300))
    meta, chunks = run(fixed_chunker, doc)
    check_invariants(fixed_chunker, doc.encode(), "doc.md", chunks)
    assert meta.document_id == "x" and len(chunks) > 3
    assert all(c.heading_path == [] and c.embed_text == c.body for c in chunks)
    assert chunks[0].char_start == doc.index("# Title")  # front matter is not content
    assert max(c.token_count for c in chunks) > 200  # windows are filled, not cut on structure


def test_strategy_comes_from_the_environment():
    env = {"RAGMESH_CHUNKER_STRATEGY": "fixed"}
    assert config.load(ChunkerConfig, "chunker", env).strategy == "fixed"
    assert config.load(ChunkerConfig, "chunker", {}).strategy == "structure"
    with pytest.raises(ValueError, match="not one of structure, fixed"):
        make_chunker(strategy="semantic")


def test_structure_chunker_id(chunker):
    assert chunker.chunker_id == "structure-v2" and chunker.max_tokens == 256
