"""Builders for test documents in every supported format, made in the test run (no binary fixtures)."""

import io
import textwrap
import zipfile

import docx
from docx.shared import Pt
from pypdf import PdfWriter
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.pdfgen import canvas as pdf_canvas
from reportlab.platypus import Paragraph, SimpleDocTemplate, Table

from services.chunker.parsing import read_document
from shared.model import DocumentMeta


def meta(uri: str, **fields) -> DocumentMeta:
    return DocumentMeta(tenant_id="t", document_id="", version="", access_scopes=[], source_uri=uri, **fields)


def run(chunker, content, uri="doc.md", **fields):
    return chunker.run(content if isinstance(content, bytes) else content.encode(), meta(uri, **fields))


def check_invariants(chunker, content: bytes, uri: str, chunks) -> str:
    """Every body is the exact slice of the canonical text its offsets name, every non-whitespace
    character of the content lies in some chunk, and every chunk fits the window. Returns the text."""
    parsed = read_document(content, uri)
    text = parsed.text
    covered = bytearray(len(text))
    for chunk in chunks:
        assert text[chunk.char_start : chunk.char_end] == chunk.body
        assert chunk.token_count <= chunker.max_tokens
        assert chunker.counter.count(chunk.embed_text) == chunk.token_count
        covered[chunk.char_start : chunk.char_end] = b"\x01" * (chunk.char_end - chunk.char_start)
    missing = [i for i in range(parsed.body_start, len(text)) if not text[i].isspace() and not covered[i]]
    assert missing == [], f"dropped text: {text[missing[0] : missing[0] + 40]!r}"
    return text


def pdf(story_spec, footer: str = "", page_size=A4) -> bytes:
    """story_spec: ("title"|"h2"|"p", text) or ("table", rows, repeat_header)."""
    styles = getSampleStyleSheet()
    names = {"title": "Title", "h2": "Heading2", "p": "BodyText"}
    story = []
    for item in story_spec:
        if item[0] == "table":
            story.append(Table(item[1], repeatRows=1 if item[2] else 0))
        else:
            story.append(Paragraph(item[1], styles[names[item[0]]]))

    def on_page(canvas, doc):
        if footer:
            canvas.setFont("Helvetica", 8)
            canvas.drawString(72, 30, footer.format(page=doc.page))

    out = io.BytesIO()
    SimpleDocTemplate(out, pagesize=page_size, invariant=1).build(story, onFirstPage=on_page, onLaterPages=on_page)
    return out.getvalue()


def two_column_pdf(
    left: list[tuple[str, str]],
    right: list[tuple[str, str]],
    *,
    title: str = "",
    intro: str = "",
    right_offset: float = 0.0,
    wrap: int = 45,
) -> bytes:
    """A page laid out as most PDF producers write one: every line placed on its own, here in two columns of
    (heading, paragraph) blocks. `right_offset` lowers the right column (0: baselines meet, as in LaTeX);
    `intro` is a paragraph across both columns under the title; `wrap` is a column's line width in characters."""
    out = io.BytesIO()
    page = pdf_canvas.Canvas(out, pagesize=A4, invariant=1)
    width, height = A4
    y = height - 60
    if title:
        page.setFont("Helvetica-Bold", 20)
        page.drawString(50, y, title)
        y -= 30
    page.setFont("Helvetica", 10)
    for line in textwrap.wrap(intro, 2 * wrap + 10):
        page.drawString(50, y, line)
        y -= 13
    top = y - 10

    def column(x: float, y: float, blocks: list[tuple[str, str]]) -> None:
        for heading, body in blocks:
            if heading:
                page.setFont("Helvetica-Bold", 13)
                page.drawString(x, y, heading)
                y -= 19.5  # 1.5 lines of 13
            page.setFont("Helvetica", 10)
            for line in textwrap.wrap(body, wrap):
                page.drawString(x, y, line)
                y -= 13
            y -= 6.5

    column(50, top, left)
    column(width / 2 + 10, top - right_offset, right)
    page.showPage()
    page.save()
    return out.getvalue()


_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def docx_with_footnote(before: str, note: str, after: str) -> bytes:
    """A Word document with one footnote, referred to between `before` and `after` (python-docx cannot write
    notes: the footnotes part, its relationship and its content type are added to the package here)."""
    from docx.oxml import parse_xml

    document = docx.Document()
    paragraph = document.add_paragraph(before)
    paragraph.add_run()._r.append(parse_xml(f'<w:footnoteReference xmlns:w="{_W}" w:id="1"/>'))
    paragraph.add_run(after)
    out = io.BytesIO()
    document.save(out)
    notes = (
        f'<w:footnotes xmlns:w="{_W}"><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r>'
        f'</w:p></w:footnote><w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve">'
        f" {note}</w:t></w:r></w:p></w:footnote></w:footnotes>"
    )
    source, result = zipfile.ZipFile(io.BytesIO(out.getvalue())), io.BytesIO()
    with zipfile.ZipFile(result, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "word/_rels/document.xml.rels":
                data = data.replace(
                    b"</Relationships>",
                    b'<Relationship Id="rIdNotes" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                    b'relationships/footnotes" Target="footnotes.xml"/></Relationships>',
                )
            elif item.filename == "[Content_Types].xml":
                data = data.replace(
                    b"</Types>",
                    b'<Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-'
                    b'officedocument.wordprocessingml.footnotes+xml"/></Types>',
                )
            target.writestr(item, data)
        target.writestr("word/footnotes.xml", notes)
    return result.getvalue()


def blank_pdf() -> bytes:
    """A valid PDF whose page has no text layer (what a scan without OCR looks like to us)."""
    writer = PdfWriter()
    writer.add_blank_page(width=595, height=842)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def encrypted_pdf(content: bytes, password: str = "s3cret") -> bytes:
    writer = PdfWriter(clone_from=io.BytesIO(content))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(build) -> bytes:
    document = docx.Document()
    document.styles["Normal"].font.size = Pt(11)
    build(document)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
