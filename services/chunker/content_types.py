"""The content types the chunker reads and the file extensions that imply them: light to import, so the CLI
can tell which files of a folder to send without loading every parser."""

import os

MARKDOWN = "text/markdown"
TEXT = "text/plain"
HTML = "text/html"
XHTML = "application/xhtml+xml"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
JSON = "application/json"
CSV = "text/csv"
TSV = "text/tab-separated-values"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
EML = "message/rfc822"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
RST = "text/x-rst"
IPYNB = "application/x-ipynb+json"

EXTENSIONS = {
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".txt": TEXT,
    ".text": TEXT,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": XHTML,
    ".pdf": PDF,
    ".docx": DOCX,
    ".json": JSON,
    ".csv": CSV,
    ".tsv": TSV,
    ".xlsx": XLSX,
    ".eml": EML,
    ".pptx": PPTX,
    ".rst": RST,
    ".ipynb": IPYNB,
}


def content_type_for(content_type: str, source_uri: str) -> str:
    """The declared content type (parameters dropped), else the one the file extension implies."""
    if content_type:
        return content_type.split(";")[0].strip().lower()
    return EXTENSIONS.get(os.path.splitext(source_uri)[1].lower(), "")
