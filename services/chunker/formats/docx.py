"""DOCX -> canonical text, with python-docx (MIT).

Body paragraphs and tables are read in document order. Heading styles give levels ("Title" is the
top level when present, "Heading N" below it); a short, all-bold paragraph that starts with a clause
number ("7.", "7.2") is treated as a heading too, since contracts often format clause titles by
hand. List paragraphs (list styles or Word numbering) become list items: bullets as "- ", numbered
lists as "1. ", "2. " counted per list, nested levels indented. Tables take their first row as the
header; a merged cell is written once and a nested table is flattened into its cell. Tracked changes are
read as accepted: pending insertions are text (a redlined contract's new clauses), deletions are not. A footnote
or endnote is read where the text refers to it, "(footnote: ...)". A text box's paragraphs follow the paragraph it
is anchored in. Page headers, footers and comments are not read.
"""

import re
from typing import Any

import docx
from docx.opc.exceptions import PackageNotFoundError
from docx.oxml import parse_xml
from docx.oxml.ns import qn
from docx.table import Table
from docx.text.paragraph import Paragraph

from services.chunker.formats.canonical import CanonicalWriter
from services.chunker.formats.packages import open_package
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
_CLAUSE_HEADING = re.compile(r"^\d+(?:\.\d+)*\.?\s+\S")


def _open(content: bytes, name: str):
    return open_package(docx.Document, content, name, "DOCX", (PackageNotFoundError,))


class _Numbering:
    """Which Word lists are numbered (decimal, letters, roman) rather than bulleted, and their counters."""

    def __init__(self, document) -> None:
        self.formats: dict[tuple[str, str], str] = {}
        self.counters: dict[tuple[str, str], int] = {}
        try:
            root = document.part.numbering_part.element
        except (KeyError, NotImplementedError, AttributeError):
            return
        abstract = {}
        for node in root.findall(qn("w:abstractNum")):
            levels = {}
            for lvl in node.findall(qn("w:lvl")):
                fmt = lvl.find(qn("w:numFmt"))
                levels[lvl.get(qn("w:ilvl"))] = fmt.get(qn("w:val")) if fmt is not None else "decimal"
            abstract[node.get(qn("w:abstractNumId"))] = levels
        for num in root.findall(qn("w:num")):
            ref = num.find(qn("w:abstractNumId"))
            for ilvl, fmt in abstract.get(ref.get(qn("w:val")) if ref is not None else "", {}).items():
                self.formats[(num.get(qn("w:numId")), ilvl)] = fmt

    def marker(self, num_id: str, ilvl: str, style_name: str) -> str:
        fmt = self.formats.get((num_id, ilvl), "decimal" if "number" in style_name.lower() else "bullet")
        if fmt in ("bullet", "none"):
            return "-"
        key = (num_id, ilvl)
        self.counters[key] = self.counters.get(key, 0) + 1
        # A deeper level restarts when its parent advances.
        for other in [k for k in self.counters if k[0] == num_id and int(k[1]) > int(ilvl)]:
            del self.counters[other]
        return f"{self.counters[key]}."


def _list_info(paragraph: Paragraph) -> tuple[str, str] | None:
    """(numId, level) of a list paragraph, from its own properties or its style's."""
    for ppr in (paragraph._p.pPr, paragraph.style.element.pPr if paragraph.style is not None else None):
        # python-docx's oxml child properties are descriptors that its annotations type loosely.
        num: Any = ppr.numPr if ppr is not None else None
        if num is not None and num.numId is not None and num.numId.val != 0:
            return str(num.numId.val), str(num.ilvl.val if num.ilvl is not None else 0)
    style = paragraph.style.name if paragraph.style is not None else ""
    if style.lower().startswith("list"):
        digits = re.findall(r"\d+", style)
        return f"style:{style}", str(int(digits[0]) - 1 if digits else 0)
    return None


# A reader of the document sees the runs directly in a paragraph, in hyperlinks, fields and content controls, and
# in tracked insertions and moves; not those in tracked deletions or moved-away text, nor a text box's own
# paragraphs drawn inside a run. (python-docx's Paragraph.text reads direct runs and hyperlinks only, so a
# pending insertion was lost.)
_UNSEEN = frozenset({qn("w:del"), qn("w:moveFrom"), qn("w:txbxContent"), qn("w:p")})


# Footnotes and endnotes: their text, by (kind, id), read where the body refers to them.
Notes = dict[tuple[str, str], str]
_NOTE_KINDS = ("footnote", "endnote")


def _words(element) -> str:
    """The text of every w:t under an element (a note, a text box's paragraph), spaces collapsed."""
    return " ".join("".join(t.text or "" for t in element.iter(qn("w:t"))).split())


def _notes(document) -> Notes:
    """The document's footnotes and endnotes (python-docx does not read them): a clause's "Excludes public
    holidays" footnote is part of what the clause says."""
    found: Notes = {}
    parts = {str(part.partname): part for part in document.part.package.iter_parts()}
    for kind in _NOTE_KINDS:
        part = parts.get(f"/word/{kind}s.xml")
        if part is None:
            continue
        for note in parse_xml(part.blob).findall(qn(f"w:{kind}")):
            if note.get(qn("w:type")) in ("separator", "continuationSeparator", "continuationNotice"):
                continue
            text = _words(note)
            if text:
                found[(kind, note.get(qn("w:id")) or "")] = text
    return found


def _paragraph_text(paragraph: Paragraph, notes: Notes | None = None) -> str:
    p = paragraph._p
    parts = []
    for run in p.iter(qn("w:r")):
        node = run.getparent()
        while node is not None and node is not p and node.tag not in _UNSEEN:
            node = node.getparent()
        if node is not p:
            continue
        parts.append(run.text)  # w:t, w:tab, w:br, ... as python-docx reads a run
        for kind in _NOTE_KINDS:
            reference = run.find(qn(f"w:{kind}Reference"))
            text = (notes or {}).get((kind, reference.get(qn("w:id")) or "")) if reference is not None else None
            if text:
                parts.append(f" ({kind}: {text})")
    return "".join(parts)


def _heading_level(paragraph: Paragraph, text: str, offset: int) -> int:
    style = paragraph.style.name if paragraph.style is not None else ""
    if style.lower() == "title":
        return 1
    match = _HEADING_STYLE.match(style)
    if match:
        return int(match.group(1)) + offset
    runs = [r for r in paragraph.runs if r.text.strip()]
    if (
        runs
        and all(r.bold for r in runs)
        and _CLAUSE_HEADING.match(text)
        and len(text) <= 90
        and not text.endswith((".", ";", ","))
    ):
        return min(text.split(None, 1)[0].rstrip(".").count(".") + 1 + offset, 6)
    return 0


_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"


def _text_boxes(paragraph: Paragraph) -> list[str]:
    """The paragraphs of the text boxes anchored in a paragraph (a callout: "Important: ..."), each once: Word
    writes a box twice, as a drawing and as its older VML fallback."""
    found = []
    for box in paragraph._p.iter(qn("w:txbxContent")):
        node = box.getparent()
        while node is not None and node is not paragraph._p and node.tag != _FALLBACK:
            node = node.getparent()
        if node is not None and node.tag == _FALLBACK:
            continue
        found += [text for inner in box.iter(qn("w:p")) if (text := _words(inner))]
    return found


def _rows(table: Table, notes: Notes | None = None) -> list[list[str]]:
    rows = []
    for row in table.rows:
        cells, seen = [], set()
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue  # a horizontally merged cell is repeated by python-docx
            seen.add(id(cell._tc))
            cells.append(_cell_text(cell, notes))
        rows.append(cells)
    return rows


def _cell_text(cell, notes: Notes | None = None) -> str:
    """A cell's paragraphs, and the text of any table nested in it, as one line of text."""
    parts = []
    for item in cell.iter_inner_content():
        if isinstance(item, Table):
            parts += [" ".join(row) for row in _rows(item, notes)]
        else:
            parts.append(_paragraph_text(item, notes))
    return " ".join(parts)


def parse_docx(content: bytes, name: str) -> ParsedDocument:
    document = _open(content, name)
    writer = CanonicalWriter()
    numbering = _Numbering(document)
    try:
        notes = _notes(document)
        blocks = list(document.iter_inner_content())
        styles = {b.style.name.lower() for b in blocks if isinstance(b, Paragraph) and b.style is not None}
    except Exception as exc:  # noqa: BLE001
        raise InvalidArgument("document.content", f"{name} is not a readable DOCX ({exc})") from None
    # With a Title paragraph, "Heading 1" sits one level below it.
    offset = 1 if "title" in styles else 0
    current_list = None
    for block in blocks:
        if isinstance(block, Table):
            writer.table(_rows(block, notes))
            continue
        text = _paragraph_text(block, notes).replace("\t", " ").strip()
        boxes = _text_boxes(block)
        if not text:
            for box in boxes:
                writer.paragraph(box)
            continue
        level = _heading_level(block, text, offset)
        info = _list_info(block) if not level else None
        if level:
            writer.heading(level, text)
        elif info is not None:
            if current_list is not None and info[0] != current_list:
                writer.end_list()  # another Word list: a new list in the canonical text too
            current_list = info[0]
            style = block.style.name if block.style is not None else ""
            writer.list_item(text, numbering.marker(info[0], info[1], style), int(info[1]))
        else:
            writer.paragraph(text)
        for box in boxes:  # after the paragraph it is anchored in
            writer.paragraph(box)
    parsed = writer.result()
    if not parsed.text.strip():
        raise InvalidArgument("document.content", f"{name} has no text")
    parsed.title = parsed.title or (document.core_properties.title or "").strip()
    return parsed
