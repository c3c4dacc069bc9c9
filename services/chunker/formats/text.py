"""Markdown and plain text: the decoded file is the canonical text; front matter states metadata."""

from services.chunker.frontmatter import split_front_matter
from services.chunker.structure import ParsedDocument, parse_markdown, parse_text
from shared.errors import InvalidArgument


def decode(content: bytes, name: str, kind: str, encoding: str = "utf-8") -> str:
    """Bytes of a text format -> str, refusing binary data and undecodable bytes by name."""
    if b"\x00" in content:
        raise InvalidArgument("document.content", f"{name} looks binary (NUL bytes), not {kind}")
    try:
        text = content.decode(encoding)
    except UnicodeDecodeError as exc:
        label = "UTF-8" if encoding.replace("_", "-").lower() in ("utf-8", "utf8") else encoding
        raise InvalidArgument("document.content", f"{name} is not valid {label} (byte {exc.start})") from None
    return text.removeprefix("\ufeff")


def _parse(content: bytes, name: str, kind: str, parser) -> ParsedDocument:
    text = decode(content, name, kind)
    fields, body_start = split_front_matter(text, name)
    if not text[body_start:].strip():
        raise InvalidArgument("document.content", f"{name} has no text after its front matter")
    return ParsedDocument(
        text=text,
        sections=parser(text, body_start),
        body_start=body_start,
        fields=fields,
        title=_first_heading(text[body_start:]),
    )


def parse_markdown_file(content: bytes, name: str) -> ParsedDocument:
    return _parse(content, name, "text/markdown", parse_markdown)


def parse_text_file(content: bytes, name: str) -> ParsedDocument:
    return _parse(content, name, "text/plain", parse_text)


def _first_heading(body: str) -> str:
    """A leading "# Title" line names the document."""
    for line in body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
        if line.strip():
            return ""
    return ""
