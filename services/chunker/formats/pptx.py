"""PowerPoint decks (.pptx, with python-pptx, MIT) -> canonical text: one section per slide, headed by the slide's
title ("Slide N" without one), its shapes read top to bottom and left to right: text boxes as paragraphs, bulleted
paragraphs as list items at their level, tables with their first row as the header, grouped shapes in their group's
place; then the speaker notes ("Notes: ..."), where a deck keeps what the presenter says about the slide. Hidden
slides are not read (nobody watching the deck sees them), nor the running footer, date and slide number;
pictures and charts have no text here. The title is
the deck's own (File > Properties), else its first slide's title, else the file name."""

from typing import Any

import pptx
from pptx.enum.shapes import MSO_SHAPE_TYPE, PP_PLACEHOLDER
from pptx.exc import PackageNotFoundError

from services.chunker.formats.canonical import CanonicalWriter, file_title
from services.chunker.formats.packages import open_package
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument

# Placeholders whose paragraphs are not bullets (a body or content placeholder's are, by the layout's default).
_UNBULLETED = {PP_PLACEHOLDER.TITLE, PP_PLACEHOLDER.CENTER_TITLE, PP_PLACEHOLDER.SUBTITLE}
# The deck's running footer, date and slide number: the same on every slide, not its content.
_RUNNING = {PP_PLACEHOLDER.FOOTER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.HEADER}


def _open(content: bytes, name: str):
    return open_package(pptx.Presentation, content, name, "PPTX deck", (PackageNotFoundError,))


def _in_reading_order(shapes) -> list[Any]:
    return sorted(shapes, key=lambda s: ((s.top or 0), (s.left or 0)))


def _bullet(paragraph) -> bool | None:
    """Whether the paragraph itself says it is a bullet or numbered item (True) or not (a:buNone, False), or
    None where it leaves that to its placeholder and layout."""
    p_pr = paragraph._p.pPr
    for child in p_pr if p_pr is not None else ():
        if child.tag.endswith(("}buChar", "}buAutoNum")):
            return True
        if child.tag.endswith("}buNone"):
            return False
    return None


def _write_shape(writer: CanonicalWriter, shape, title_id: int | None) -> None:
    if shape.shape_id == title_id:  # written as the slide's heading
        return
    if shape.is_placeholder and shape.placeholder_format.type in _RUNNING:
        return
    if shape.shape_type == MSO_SHAPE_TYPE.GROUP:
        for inner in _in_reading_order(shape.shapes):
            _write_shape(writer, inner, title_id)
        return
    if getattr(shape, "has_table", False) and shape.has_table:
        writer.table([[cell.text for cell in row.cells] for row in shape.table.rows])
        return
    if not getattr(shape, "has_text_frame", False) or not shape.has_text_frame:
        return
    body_placeholder = shape.is_placeholder and shape.placeholder_format.type not in _UNBULLETED
    lines: list[str] = []
    for paragraph in shape.text_frame.paragraphs:
        text = paragraph.text.replace("\x0b", " ").strip()  # a soft line break inside a paragraph
        if not text:
            continue
        bullet = _bullet(paragraph)
        if bullet is None:  # a body placeholder's paragraphs are bullets by default; an indented one is an item
            bullet = paragraph.level > 0 or (body_placeholder and len(shape.text_frame.paragraphs) > 1)
        if bullet:
            if lines:
                writer.paragraph(" ".join(lines))
                lines = []
            writer.list_item(text, "-", paragraph.level)
        else:
            lines.append(text)
    if lines:
        writer.paragraph(" ".join(lines))


def parse_pptx(content: bytes, name: str) -> ParsedDocument:
    deck = _open(content, name)
    writer = CanonicalWriter()
    first_title = ""
    try:
        for number, slide in enumerate(deck.slides, start=1):
            if slide._element.get("show") == "0":
                continue
            title_shape = slide.shapes.title
            title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
            first_title = first_title or title
            writer.heading(1, title or f"Slide {number}")
            title_id = title_shape.shape_id if title_shape is not None else None
            for shape in _in_reading_order(slide.shapes):
                _write_shape(writer, shape, title_id)
            if slide.has_notes_slide:
                notes = slide.notes_slide.notes_text_frame
                text = " ".join(notes.text.split()) if notes is not None else ""
                if text:
                    writer.paragraph(f"Notes: {text}")
        deck_title = (deck.core_properties.title or "").strip()
    except Exception as exc:  # noqa: BLE001 - a slide's XML that does not parse fails this document only
        raise InvalidArgument(
            "document.content", f"{name} is not a readable PPTX deck ({type(exc).__name__}: {exc})"
        ) from None
    parsed = writer.result(title=deck_title or first_title or file_title(name))
    if not parsed.text.strip():
        raise InvalidArgument("document.content", f"{name} has no text on a visible slide")
    return parsed
