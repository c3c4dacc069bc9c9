"""The canonical text of a non-Markdown document, written block by block with its structure.

HTML, PDF, DOCX and JSON ticket threads have no text of their own that offsets could point into,
so their parsers describe the document to a `CanonicalWriter`, which renders a Markdown-like text
(ATX headings on their own lines, paragraphs separated by blank lines, `- ` list items, pipe
tables with a header row and a `| --- |` rule, fenced code) and records every block's span in it.
The structure comes from the source format, never from re-parsing the rendering, so a paragraph
that happens to start with "#" or "|" stays a paragraph.
"""

import os
import re

from services.chunker.structure import Block, ParsedDocument, Section

_SPACES = re.compile(r"[^\S\n]+")


def clean_inline(text: str) -> str:
    """Collapse runs of whitespace; keep deliberate line breaks (<br>, soft returns) as single newlines."""
    lines = (_SPACES.sub(" ", line).strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def file_title(name: str) -> str:
    """A title for a document that has none of its own: its file name, without the extension and with word
    separators as spaces ("office-contacts.csv" -> "office contacts"); it prefixes every chunk's embed text."""
    stem = os.path.splitext(os.path.basename(name))[0]
    return " ".join(stem.replace("_", " ").replace("-", " ").split())


def _cell(text: str) -> str:
    # A cell is one line of a pipe table: line breaks become spaces and pipes are escaped.
    return clean_inline(text).replace("\n", " ").replace("|", "\\|")


class CanonicalWriter:
    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._last_kind = ""
        self._stack: list[tuple[int, str]] = []
        self.sections: list[Section] = [Section(heading_path=[], level=0)]
        self.title = ""

    def _write(self, kind: str, rendered: str, header_length: int = 0) -> Block:
        if self._parts:
            # List items of one list sit on consecutive lines; every other block gets a blank line.
            sep = "\n" if kind == self._last_kind == "list_item" else "\n\n"
            self._parts.append(sep)
            self._length += len(sep)
        start = self._length
        self._parts.append(rendered)
        self._length += len(rendered)
        self._last_kind = kind
        block = Block(kind, start, self._length, header_end=start + header_length if header_length else 0)
        self.sections[-1].blocks.append(block)
        return block

    def heading(self, level: int, text: str) -> None:
        text = clean_inline(text).replace("\n", " ")
        if not text:
            return
        level = max(1, min(level, 6))
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, text))
        self.sections.append(Section(heading_path=[t for _, t in self._stack], level=level))
        self.title = self.title or (text if level == 1 else "")
        self._write("heading", "#" * level + " " + text)

    def section(self, name: str, level: int = 1) -> None:
        """Open a section without writing a heading line (a ticket message: its header is its text)."""
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, name))
        self.sections.append(Section(heading_path=[t for _, t in self._stack], level=level))
        self._last_kind = ""

    def header(self, text: str) -> None:
        """Lines that head what follows (an e-mail's From/Date/Subject): packed with the next block."""
        text = clean_inline(text)
        if text:
            self._write("heading", text)

    def paragraph(self, text: str) -> None:
        text = clean_inline(text)
        if text:
            self._write("paragraph", text)

    def list_item(self, text: str, marker: str = "-", depth: int = 0) -> None:
        text = clean_inline(text).replace("\n", " ")
        if text:
            self._write("list_item", "  " * depth + f"{marker} {text}")

    def end_list(self) -> None:
        """The next list item starts a new list (after a blank line), not a continuation of this one."""
        self._last_kind = ""

    def code(self, text: str) -> None:
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        body = "\n".join(line.rstrip() for line in lines).strip("\n")
        if body.strip():
            fence = "````" if "```" in body else "```"
            self._write("code", f"{fence}\n{body}\n{fence}")

    def table(self, rows: list[list[str]]) -> None:
        """The first row is the header (Markdown tables have exactly one); rows are padded to one width."""
        rows = [[_cell(c) for c in row] for row in rows]
        rows = [row for row in rows if any(row)]
        if not rows:
            return
        width = max(len(row) for row in rows)
        if width == 1 and len(rows) == 1:
            self.paragraph(rows[0][0])  # a one-cell layout table is just text
            return
        lines = ["| " + " | ".join(row + [""] * (width - len(row))) + " |" for row in rows]
        header = lines[0] + "\n" + "| " + " | ".join(["---"] * width) + " |"
        self._write("table", "\n".join([header, *lines[1:]]), header_length=len(header))

    def result(self, title: str = "") -> ParsedDocument:
        text = "".join(self._parts)
        sections = [sec for sec in self.sections if sec.blocks]
        return ParsedDocument(text=text, sections=sections, title=title or self.title)
