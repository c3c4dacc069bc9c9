import pytest

from shared.errors import InvalidArgument
from shared.model import DocumentMeta
from tests.support.chunker import make_chunker

DOC = """---
doc_id: handbook/refunds
title: Refund Policy
version: 2026
effective_from: 2026-01-01
access_scopes: public, finance
---
# Refund Policy

## Consumer returns

### Timing
Consumers may request a refund within 14 days of purchase.

## Plans

| Plan | Monthly price |
| --- | --- |
| Team | $79 |
| Business | $299 |

1. The first clause.
2. The second clause.
"""


def _docx_bytes() -> bytes:
    import io

    import docx

    out = io.BytesIO()
    docx.Document().save(out)
    return out.getvalue()


def _empty_workbook() -> bytes:
    """Only an empty sheet and a hidden one with text."""
    import io

    import openpyxl

    book = openpyxl.Workbook()
    hidden = book.create_sheet("Lookups")
    hidden["A1"] = "internal"
    hidden.sheet_state = "hidden"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def run(chunker, content, uri="doc.md", **meta):
    return chunker.run(
        content if isinstance(content, bytes) else content.encode(),
        DocumentMeta(tenant_id="t", document_id="", version="", access_scopes=[], source_uri=uri, **meta),
    )


def test_front_matter_resolves_governance_metadata(chunker):
    meta, _ = run(chunker, DOC)
    assert (meta.document_id, meta.version, meta.effective_from) == ("handbook/refunds", "2026", "2026-01-01")
    assert meta.access_scopes == ["public", "finance"]
    assert meta.title == "Refund Policy" and meta.content_type == "text/markdown"


def test_bodies_are_exact_source_slices_and_cover_all_text(chunker):
    _, chunks = run(chunker, DOC)
    content_start = DOC.index("# Refund Policy")
    covered = set()
    for chunk in chunks:
        assert DOC[chunk.char_start : chunk.char_end] == chunk.body
        covered |= set(range(chunk.char_start, chunk.char_end))
    missing = [i for i in range(content_start, len(DOC)) if not DOC[i].isspace() and i not in covered]
    assert missing == []


def test_heading_path_is_prepended_and_heading_only_parents_are_kept(chunker):
    _, chunks = run(chunker, DOC)
    timing = next(c for c in chunks if "14 days" in c.body)
    assert timing.heading_path == ["Refund Policy", "Consumer returns", "Timing"]
    assert timing.embed_text.startswith("Refund Policy > Consumer returns > Timing\n")
    # "## Consumer returns" has no text of its own: it rides with its child rather than being dropped.
    assert "## Consumer returns" in timing.body


SETEXT = """Refund Policy
=============

Refunds are paid to the original payment method.

Consumer returns
----------------
Consumers may return items within 14 days.

- one item
---

A closing line.
"""


def test_setext_headings_open_sections(chunker):
    """A line of '=' or '-' under a paragraph makes it a heading (CommonMark), as pandoc and many READMEs write
    them; they were read as paragraphs, so such a document had no sections and its chunks no heading path."""
    _, chunks = run(chunker, SETEXT)
    returns = next(c for c in chunks if "14 days" in c.body)
    assert returns.heading_path == ["Refund Policy", "Consumer returns"]
    assert returns.embed_text.startswith("Refund Policy > Consumer returns\n")
    paid = next(c for c in chunks if "original payment method" in c.body)
    assert paid.heading_path == ["Refund Policy"]
    # A dash line under a list item is no underline: the item keeps it, and no section "one item" opens.
    assert all("one item" not in c.heading_path for c in chunks)


COMMENTED = """# Refund Policy

Refunds are paid within 30 days.<!-- TODO: legal says 14 days, check before publishing -->

<!--
Draft section, not approved:
Refunds are paid in cash at any office.
-->

## Exceptions

Use `<!-- not a comment -->` in templates. Gift cards are not refunded.
"""


def test_html_comments_in_markdown_are_neither_indexed_nor_quoted(chunker):
    """A rendered page does not show them; they were chunked, embedded and answered from like the text."""
    _, chunks = run(chunker, COMMENTED)
    text = "\n".join(c.body + c.embed_text for c in chunks)
    assert "legal says" not in text and "cash at any office" not in text and "Draft section" not in text
    assert "Refunds are paid within 30 days." in text and "`<!-- not a comment -->`" in text
    gift = next(c for c in chunks if "Gift cards" in c.body)
    start = gift.char_start + gift.body.index("Gift cards")
    assert COMMENTED[start : start + len("Gift cards")] == "Gift cards"  # offsets still point into the file
    with pytest.raises(InvalidArgument, match="no text outside HTML comments"):
        run(chunker, "<!-- only a comment -->\n")


def test_images_inlined_as_base64_in_markdown_are_not_text(chunker):
    """A screenshot inlined as a data URI filled chunks with base64 'words'."""
    payload = "iVBORw0KGgoAAAANSUhEUgAA" * 400
    doc = f"# Setup\n\nClick Save.\n\n![the dialog](data:image/png;base64,{payload})\n\nThen restart the agent.\n"
    _, chunks = run(chunker, doc)
    bodies = "".join(c.body + c.embed_text for c in chunks)
    assert "iVBORw0K" not in bodies and "Then restart the agent." in bodies and "![the dialog](data:image/png" in bodies
    restart = next(c for c in chunks if "restart" in c.body)
    at = restart.char_start + restart.body.index("Then restart")
    assert doc[at : at + len("Then restart")] == "Then restart"  # offsets still point into the file


def test_table_stays_whole_with_its_header(chunker):
    _, chunks = run(chunker, DOC)
    table = next(c for c in chunks if "| Team | $79 |" in c.body)
    assert "| Plan | Monthly price |" in table.body and "| Business | $299 |" in table.body


def test_oversized_table_is_split_by_rows_with_the_header_repeated(chunker):
    rows = "\n".join(f"| Plan {i} | ${i * 10} | included storage of {i} terabytes |" for i in range(80))
    doc = f"# Prices\n\n| Plan | Price | Notes |\n| --- | --- | --- |\n{rows}\n"
    _, chunks = run(chunker, doc)
    assert len(chunks) > 1
    for chunk in chunks:
        assert "| Plan | Price | Notes |" in chunk.embed_text
        assert chunk.token_count <= chunker.max_tokens


def test_long_prose_splits_on_sentences_with_overlap_and_fits_the_window(chunker):
    sentences = " ".join(f"Sentence number {i} explains one more detail about refunds." for i in range(120))
    doc = f"# Long\n\n{sentences}\n"
    _, chunks = run(chunker, doc)
    assert len(chunks) > 2
    assert all(c.token_count <= chunker.max_tokens for c in chunks)
    # Consecutive pieces overlap (start of one before the end of the previous) and always advance.
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert nxt.char_start < prev.char_end
        assert nxt.char_end > prev.char_end


def test_a_single_huge_sentence_is_cut_by_token_windows_without_losing_text(chunker):
    doc = "# Code\n\n" + "x" * 20 + " ".join(f"token{i}" for i in range(2000)) + "\n"
    _, chunks = run(chunker, doc)
    covered = set()
    for c in chunks:
        assert c.token_count <= chunker.max_tokens
        covered |= set(range(c.char_start, c.char_end))
    assert all(i in covered for i, ch in enumerate(doc) if not ch.isspace())


def test_chunk_ids_are_stable_and_change_with_content(chunker):
    _, first = run(chunker, DOC)
    _, again = run(chunker, DOC)
    assert [c.chunk_id for c in first] == [c.chunk_id for c in again]
    _, edited = run(chunker, DOC.replace("14 days", "30 days"))
    changed = {c.chunk_id for c in edited} - {c.chunk_id for c in first}
    assert len(changed) == 1


PLAIN_TEXT_HEADINGS = """NORTHWIND CLOUD DISCOUNT PROGRAMS (2025)

This document lists the standard discounts.

1. ANNUAL PREPAY

Paying annually gives about 17% off.

1.1 EXCEPTIONS

Not on add-ons.

2. VOLUME SEATS

More than 200 seats get 10% off.

Approval limits
---------------

IMPORTANT!

Deal desk approves anything above 25%.

Ask the Sales Manager first.
SEE ALSO
"""


def test_plain_text_headings_in_capitals_or_underlined_open_sections(chunker):
    """A plain-text file's one-line capitals headings, numbered or not, and underlined ones head sections; they
    were paragraphs, so "what is the annual prepay discount" met a sentence under another program."""
    _, chunks = run(chunker, PLAIN_TEXT_HEADINGS, uri="discounts.txt")
    path = {text: next(c.heading_path for c in chunks if text in c.body) for text in ("17%", "add-ons", "200", "25%")}
    title = "NORTHWIND CLOUD DISCOUNT PROGRAMS (2025)"
    assert path["17%"] == [title, "1. ANNUAL PREPAY"]
    assert path["add-ons"] == [title, "1. ANNUAL PREPAY", "1.1 EXCEPTIONS"]
    assert path["200"] == [title, "2. VOLUME SEATS"]
    # "IMPORTANT!" ends a sentence, and a last line in capitals heads nothing: both are text.
    assert path["25%"] == [title, "Approval limits"]
    assert all("IMPORTANT!" not in c.heading_path and "SEE ALSO" not in c.heading_path for c in chunks)


def test_a_capitals_line_inside_a_message_heads_a_section_under_it(chunker):
    thread = "From: Ann <a@x.example>\nDate: 2025-01-01\n\nSTEPS TRIED\n\nRestarted the client twice.\n"
    _, chunks = run(chunker, thread, uri="ticket.txt")
    restarted = next(c for c in chunks if "Restarted" in c.body)
    assert restarted.heading_path == ["Message 1 from Ann <a@x.example>", "STEPS TRIED"]


def test_ticket_threads_get_one_section_per_message(chunker):
    thread = (
        "Ticket #1\n\nFrom: Ann <a@x.example>\nDate: 2025-01-01\n\nSync fails with E-4412.\n\n"
        "From: Support <s@y.example>\nDate: 2025-01-02\n\nResolve with nwctl sync resolve.\n"
    )
    _, chunks = run(chunker, thread, uri="ticket.txt")
    paths = [c.heading_path for c in chunks]
    assert ["Message 1 from Ann <a@x.example>"] in paths and ["Message 2 from Support <s@y.example>"] in paths


@pytest.mark.parametrize(
    "content, uri, needle",
    [
        (b"", "empty.md", "empty"),
        (b"   \n\t\n", "blank.txt", "empty"),
        (b"\xfa\xfb not utf8", "bad.txt", "UTF-8"),  # (\xff\xfe first would be UTF-16's byte order mark)
        (b"\x00\x01\x02\x03binary", "garbage.txt", "binary"),
        (b"%PDF-1.7 ...", "scan.pdf", "not a readable PDF"),
        (b"PK\x03\x04 not a zip", "doc.xyz", "unsupported content type"),
        (b"---\ntitle: only\n---\n", "front.md", "no text"),
        (b"a,b\n\x00\x01,2\n", "export.csv", "binary"),
        (b"name,city\nJos\xe9,Li\xe8ge\n", "export.csv", "not valid UTF-8 (byte 13: 0xE9); save it as UTF-8"),
        (b"\xff\xfeP\x00l\x00\x00\xd8", "notes.txt", "UTF-16 byte order mark but is not valid UTF-16"),
        ("\ufeffa\x00b".encode("utf-16-le"), "notes.txt", "binary"),
        (b",,\n , \n", "export.csv", "has no text"),
        (b'---\nversion: "v1\\nv2"\n---\n# A\n\nText.\n', "v.md", "control character U+000A"),
        (b'---\ndoc_id: "a\\u0007b"\n---\n# A\n\nText.\n', "bell.md", "control character U+0007"),
        (b"---\ndoc_id: " + b"x" * 513 + b"\n---\n# A\n\nText.\n", "long.md", "513 characters, over the limit"),
        (b'---\ndoc_id: "a\\u2028b"\n---\n# A\n\nText.\n', "sep.md", "control character U+2028"),
        (b"PK\x03\x04 not a zip", "book.xlsx", "not a readable XLSX"),
        (_docx_bytes(), "book.xlsx", "not a readable XLSX"),  # a zip, but a Word document
        (_empty_workbook(), "book.xlsx", "no text in a visible sheet"),
    ],
)
def test_bad_input_names_the_document_and_the_problem(chunker, content, uri, needle):
    with pytest.raises(InvalidArgument) as err:
        run(chunker, content, uri=uri)
    assert needle in err.value.message and uri in err.value.message


def test_size_limit(chunker):
    small = make_chunker(max_bytes=100)
    with pytest.raises(InvalidArgument, match="over the 100-byte limit") as err:
        run(small, "# Big\n\n" + "word " * 100, uri="big.md")
    assert "RAGMESH_CHUNKER_MAX_BYTES" in err.value.message  # what to raise for a large deck or PDF


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_wide_unicode_with_a_byte_order_mark_is_read_as_text(chunker, encoding):
    """Excel's "Unicode Text" export and PowerShell 5's Out-File write UTF-16 with a byte order mark."""
    doc = DOC if encoding != "utf-16-be" else "\ufeff" + DOC  # the big-endian codec writes no mark itself
    meta, chunks = run(chunker, doc.encode(encoding))
    assert meta.document_id == "handbook/refunds" and meta.access_scopes == ["public", "finance"]
    assert "".join(c.body for c in chunks) and all("\x00" not in c.body for c in chunks)
    sheet = "Office\tPhone\r\nQuay Tower\t+353 1 555 0142\r\n".encode("utf-16")
    _, rows = run(chunker, sheet, uri="offices.tsv")
    assert "| Quay Tower | +353 1 555 0142 |" in rows[0].body


def test_a_document_id_may_hold_a_format_character(chunker):
    """A zero-width non-joiner is part of Persian words, so of file names: not a control character."""
    meta, _ = run(chunker, "# A\n\nText.\n", uri="\u0645\u06cc\u200c\u0631\u0648\u062f.md")
    assert "\u200c" in meta.document_id
