"""Which parser reads which file, and the canonical text other components can ask for.

Every parser turns bytes into a ParsedDocument: the text every chunk offset and citation span
points into, and its structure tree. For Markdown and plain text that text is the decoded file;
HTML, PDF, DOCX, reStructuredText, Jupyter notebooks, JSON ticket threads, e-mail messages, CSV/TSV tables, XLSX
workbooks and PPTX decks get a rendered canonical text (formats/canonical.py).
"""

from services.chunker.content_types import (
    CSV,
    DOCX,
    EML,
    HTML,
    IPYNB,
    JSON,
    MARKDOWN,
    PDF,
    PPTX,
    RST,
    TEXT,
    TSV,
    XHTML,
    XLSX,
    content_type_for,
)
from services.chunker.formats.delimited import parse_csv, parse_tsv
from services.chunker.formats.docx import parse_docx
from services.chunker.formats.email_message import parse_eml
from services.chunker.formats.html import parse_html
from services.chunker.formats.notebook import parse_notebook
from services.chunker.formats.pdf import parse_pdf
from services.chunker.formats.pptx import parse_pptx
from services.chunker.formats.rst import parse_rst
from services.chunker.formats.text import parse_markdown_file, parse_text_file
from services.chunker.formats.tickets import parse_ticket_json
from services.chunker.formats.xlsx import parse_xlsx
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument

__all__ = ["PARSERS", "canonical_text", "content_type_for", "parse_document", "read_document"]

PARSERS = {
    MARKDOWN: parse_markdown_file,
    TEXT: parse_text_file,
    HTML: parse_html,
    XHTML: parse_html,
    PDF: parse_pdf,
    DOCX: parse_docx,
    JSON: parse_ticket_json,
    CSV: parse_csv,
    TSV: parse_tsv,
    XLSX: parse_xlsx,
    EML: parse_eml,
    PPTX: parse_pptx,
    RST: parse_rst,
    IPYNB: parse_notebook,
}


def parse_document(content: bytes, content_type: str, name: str) -> ParsedDocument:
    """Raises InvalidArgument naming the document when it cannot be read as `content_type`."""
    parser = PARSERS.get(content_type)
    if parser is None:
        raise InvalidArgument(
            "document.meta.content_type", f"{name}: unsupported content type {content_type or 'unknown'!r}"
        )
    return parser(content, name)


def read_document(content: bytes, source_uri: str, content_type: str = "") -> ParsedDocument:
    """The canonical text and structure of one file, as the chunker sees it (for the evaluation
    harness, so evidence quotes resolve to the same offsets as chunk spans)."""
    return parse_document(content, content_type_for(content_type, source_uri), source_uri)


def canonical_text(content: bytes, source_uri: str, content_type: str = "") -> str:
    return read_document(content, source_uri, content_type).text
