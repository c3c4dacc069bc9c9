"""Markdown and plain text: the decoded file is the canonical text; front matter states metadata."""

import codecs
import json
import re

from services.chunker.frontmatter import split_front_matter
from services.chunker.structure import ParsedDocument, parse_markdown, parse_text
from shared.errors import InvalidArgument

# Byte order marks of the wide Unicode encodings, UTF-32's first: its little-endian mark starts with UTF-16's.
# Windows writes them (Excel's "Unicode Text" export, PowerShell 5's Out-File): the mark names the encoding.
_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def decode(content: bytes, name: str, kind: str, encoding: str = "utf-8") -> str:
    """Bytes of a text format -> str, refusing binary data and undecodable bytes by name. A UTF-16 or UTF-32
    byte order mark decides the encoding (it outranks a declared one, as in HTML); nothing is guessed."""
    encoding = next((wide for bom, wide in _WIDE_BOMS if content.startswith(bom)), encoding)
    wide = encoding in ("utf-16", "utf-32")
    if not wide and b"\x00" in content:
        raise InvalidArgument("document.content", f"{name} looks binary (NUL bytes), not {kind}")
    try:
        text = content.decode(encoding)
    except UnicodeDecodeError as exc:
        if wide:
            raise InvalidArgument(
                "document.content",
                f"{name} starts with a {encoding.upper()} byte order mark but is not valid {encoding.upper()} "
                f"(byte {exc.start})",
            ) from None
        label = "UTF-8" if encoding.replace("_", "-").lower() in ("utf-8", "utf8") else encoding
        byte = content[exc.start : exc.start + 1].hex().upper()
        raise InvalidArgument(
            "document.content",
            f"{name} is not valid {label} (byte {exc.start}: 0x{byte}); save it as UTF-8, or as UTF-16 with a byte "
            "order mark",
        ) from None
    if wide and "\x00" in text:
        raise InvalidArgument("document.content", f"{name} looks binary (NUL characters), not {kind}")
    return text.removeprefix("\ufeff")


def read_json(content: bytes, name: str, kind: str) -> object:
    """A JSON document (a ticket thread, a notebook), refused naming where it does not parse."""
    try:
        return json.loads(decode(content, name, kind))
    except json.JSONDecodeError as exc:
        raise InvalidArgument(
            "document.content", f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def _parse(content: bytes, name: str, kind: str, parser, markdown: bool = False) -> ParsedDocument:
    text = decode(content, name, kind)
    front = split_front_matter(text, name)
    body_start = front.body_start
    if not text[body_start:].strip():
        raise InvalidArgument("document.content", f"{name} has no text after its front matter")
    if markdown:  # what a rendered page does not show as text
        text = text[:body_start] + blank_unrendered(text[body_start:])
        if not text[body_start:].strip():
            raise InvalidArgument("document.content", f"{name} has no text outside HTML comments and inlined data")
    return ParsedDocument(
        text=text,
        sections=parser(text, body_start),
        body_start=body_start,
        fields=front.fields,
        access_like=front.access_like,
        title=first_heading(text[body_start:]),
    )


def parse_markdown_file(content: bytes, name: str) -> ParsedDocument:
    return _parse(content, name, "text/markdown", parse_markdown, markdown=True)


_FENCE_LINE = re.compile(r"^[ \t]*(```|~~~)", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)


def blank_html_comments(text: str) -> str:
    """The text with each HTML comment (`<!-- ... -->`, one never closed runs to the end) turned into spaces,
    line breaks kept: a rendered page does not show it, so it is neither indexed nor quoted ("<!-- TODO: legal
    says 14 days, check -->"), and every other character keeps its offset. Comments inside fenced code or an
    inline code span are text."""
    fences = [m.start() for m in _FENCE_LINE.finditer(text)]
    out = []
    last = 0
    for match in _COMMENT.finditer(text):
        start = match.start()
        if start < last or sum(f < start for f in fences) % 2 or _in_code_span(text, start):
            continue
        out += [text[last:start], re.sub(r"[^\n]", " ", match.group())]
        last = match.end()
    return "".join(out) + text[last:]


# An image or file inlined as base64 ("![chart](data:image/png;base64,iVBORw0...)"): its payload is no text.
_DATA_URI_PAYLOAD = re.compile(r"(?<=;base64,)[A-Za-z0-9+/=]{64,}")


def blank_unrendered(text: str) -> str:
    """The Markdown text as a reader sees it, every character at its offset: HTML comments blanked
    (blank_html_comments), and the payload of base64 data URIs, which would fill chunks with tokens that are
    no words (a 200 KB screenshot inlined in a page)."""
    return _DATA_URI_PAYLOAD.sub(lambda m: " " * len(m.group()), blank_html_comments(text))


def _in_code_span(text: str, at: int) -> bool:
    """An odd number of backticks before `at` on its line: inside `inline code`."""
    return text.count("`", text.rfind("\n", 0, at) + 1, at) % 2 == 1


def parse_text_file(content: bytes, name: str) -> ParsedDocument:
    return _parse(content, name, "text/plain", parse_text)


def first_heading(body: str) -> str:
    """A leading "# Title" line, or a "Title" line underlined with "=" (setext), names the document."""
    lines = body.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return line[2:].strip()
        if line.strip():
            underline = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return line.strip() if underline and set(underline) == {"="} else ""
    return ""
