"""Source text -> a structure tree: sections (heading path, level) holding typed blocks with offsets.

Markdown: ATX and setext headings, paragraphs, list items / numbered clauses, pipe tables, fenced code.
Plain text: paragraphs; an email-like "From:" line starts a new message section (ticket threads); a one-line
paragraph in capitals ("1. ANNUAL PREPAY") or an underlined one heads a section.
Every offset is into the document's text, so a block's text is always `text[start:end]`. For
Markdown and plain text that text is the decoded file; other formats render a canonical text
(see services/chunker/formats/) and build the same tree over it.
"""

import dataclasses
import re

from shared.text import is_table_rule, message_heading

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
# A setext heading's underline: the paragraph right above it is a heading, level 1 for "=", 2 for "-".
_SETEXT = re.compile(r"^ {0,3}(=+|-{2,})[ \t]*$")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)]|\d+(?:\.\d+)+\.?|\([a-z0-9]+\))[ \t]+\S")
_TABLE_ROW = re.compile(r"^[ \t]*\|")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_MESSAGE_START = re.compile(r"^From:[ \t]*\S", re.IGNORECASE)
_HEADER_LINE = re.compile(r"^[A-Za-z][A-Za-z-]*:[ \t]")


@dataclasses.dataclass
class Block:
    kind: str  # heading | paragraph | list_item | table | code
    start: int
    end: int
    # For tables: the span of the header row plus its rule line, repeated in every piece of a split table.
    header_end: int = 0


@dataclasses.dataclass
class Section:
    heading_path: list[str]
    level: int
    blocks: list[Block] = dataclasses.field(default_factory=list)

    @property
    def start(self) -> int:
        return self.blocks[0].start

    @property
    def end(self) -> int:
        return self.blocks[-1].end

    @property
    def has_content(self) -> bool:
        return any(b.kind != "heading" for b in self.blocks)


@dataclasses.dataclass
class ParsedDocument:
    """What every format parser returns: the text all offsets point into, and its structure."""

    text: str
    sections: list[Section]
    # Where the content starts (after front matter); only Markdown and plain text have front matter.
    body_start: int = 0
    # Stated governance, unchecked (governance.py checks it): front matter's known keys with their YAML values, or
    # a JSON thread object's.
    fields: dict[str, object] = dataclasses.field(default_factory=dict)
    # Keys about access that ragmesh does not read, as dotted paths (frontmatter.access_like_paths).
    access_like: list[str] = dataclasses.field(default_factory=list)
    # The title the document gives itself (first H1, <title>, PDF/DOCX properties), if any.
    title: str = ""

    HEAD_CHARS = 2000

    @property
    def head(self) -> str:
        """Where a document states what it is: its text up to the end of its first section with content, at
        most HEAD_CHARS characters (a title block, a preamble, a plain text's opening)."""
        first = next((s for s in self.sections if s.has_content), None)
        end = first.end if first else len(self.text)
        return self.text[self.body_start : min(end, self.body_start + self.HEAD_CHARS)]


def _lines(text: str, start: int) -> list[tuple[int, int, str]]:
    """(start, end-without-newline, line) for every line from `start`."""
    out, pos = [], start
    while pos < len(text):
        nl = text.find("\n", pos)
        stop = len(text) if nl < 0 else nl
        end = stop - 1 if stop > pos and text[stop - 1] == "\r" else stop
        out.append((pos, end, text[pos:end]))
        pos = stop + 1
    return out


def parse_markdown(text: str, start: int = 0, title: str = "") -> list[Section]:
    sections = [Section(heading_path=[], level=0)]
    stack: list[tuple[int, str]] = []
    lines = _lines(text, start)
    i = 0

    def add(block: Block) -> None:
        sections[-1].blocks.append(block)

    def open_section(level: int, heading: str, block: Block) -> None:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        sections.append(Section(heading_path=[h for _, h in stack], level=level))
        add(block)

    while i < len(lines):
        s, e, line = lines[i]
        if not line.strip():
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            open_section(len(heading.group(1)), heading.group(2).strip(), Block("heading", s, e))
            i += 1
            continue
        if fence := _FENCE.match(line):
            marker = fence.group(1)
            j = i + 1
            while j < len(lines) and not lines[j][2].lstrip().startswith(marker):
                j += 1
            j = min(j, len(lines) - 1)
            add(Block("code", s, lines[j][1]))
            i = j + 1
            continue
        if _TABLE_ROW.match(line) and i + 1 < len(lines) and is_table_rule(lines[i + 1][2]):
            j = i + 2
            while j < len(lines) and _TABLE_ROW.match(lines[j][2]):
                j += 1
            add(Block("table", s, lines[j - 1][1], header_end=lines[i + 1][1]))
            i = j
            continue
        kind = "list_item" if _LIST_ITEM.match(line) else "paragraph"
        j = i + 1
        while j < len(lines):
            nxt = lines[j][2]
            if (
                not nxt.strip()
                or _HEADING.match(nxt)
                or _FENCE.match(nxt)
                or _LIST_ITEM.match(nxt)
                or (_TABLE_ROW.match(nxt) and j + 1 < len(lines) and is_table_rule(lines[j + 1][2]))
            ):
                break
            if kind == "paragraph" and _SETEXT.match(nxt):
                break
            j += 1
        if kind == "paragraph" and j < len(lines) and (underline := _SETEXT.match(lines[j][2])):
            heading_text = " ".join(line.strip() for _, _, line in lines[i:j])
            level = 1 if underline.group(1).startswith("=") else 2
            open_section(level, heading_text, Block("heading", s, lines[j][1]))
            i = j + 1
            continue
        add(Block(kind, s, lines[j - 1][1]))
        i = j
    return [sec for sec in sections if sec.blocks]


# A plain-text heading: one short line in capitals, numbered or not ("NORTHWIND CLOUD DISCOUNT PROGRAMS (2025)",
# "1. ANNUAL PREPAY", "SECTION 4.2 LIABILITY"), with no sentence punctuation at its end.
_TEXT_NUMBERING = re.compile(r"^(?:(?:section|part|chapter|article)[ \t]+)?(\d+(?:\.\d+)*)[.)]?[ \t]+", re.IGNORECASE)


def _text_heading_depth(line: str) -> int | None:
    """None when the line is no plain-text heading; else its numbering depth ("1." is 1, "4.2" is 2; 0 unnumbered)."""
    stripped = line.strip()
    if not 2 <= len(stripped) <= 80 or stripped[-1] in ".,;:!?" or _MESSAGE_START.match(stripped):
        return None
    numbering = _TEXT_NUMBERING.match(stripped)
    words = stripped[numbering.end() :] if numbering else stripped
    letters = [c for c in words if c.isalpha()]
    if len(letters) < 2 or any(c.islower() for c in letters) or len(words.split()) > 12:
        return None
    return numbering.group(1).count(".") + 1 if numbering else 0


def parse_text(text: str, start: int = 0, title: str = "") -> list[Section]:
    """Paragraphs separated by blank lines; a "From:" paragraph opens a new message section; a one-line paragraph
    in capitals, or one underlined with "=" or "-", heads a section (inside a message, under it)."""
    sections = [Section(heading_path=[], level=0)]
    stack: list[tuple[int, str]] = []  # the open headings, (level, text)
    lines = _lines(text, start)
    # One past the last line with text: a heading heads something, so the last paragraph is never one.
    text_end = max((n + 1 for n, ln in enumerate(lines) if ln[2].strip()), default=0)
    i = 0
    messages = 0
    while i < len(lines):
        s, e, line = lines[i]
        if not line.strip():
            i += 1
            continue
        j = i + 1
        while j < len(lines) and lines[j][2].strip() and not _MESSAGE_START.match(lines[j][2]):
            j += 1
        kind = "paragraph"
        later = j < text_end
        underline = _SETEXT.match(lines[i + 1][2]) if j == i + 2 else None
        depth = _text_heading_depth(line) if j == i + 1 and later else None
        if _MESSAGE_START.match(line):
            messages += 1
            sender = line.split(":", 1)[1].strip()
            stack = [(1, message_heading(messages, sender))]
            sections.append(Section(heading_path=[stack[0][1]], level=1))
            # A From/Date/Subject header heads the message: it is packed with the message's first paragraph.
            if all(_HEADER_LINE.match(ln[2]) for ln in lines[i:j]):
                kind = "heading"
        elif (underline and later and not _LIST_ITEM.match(line)) or depth is not None:
            if underline:
                level = 1 if underline.group(1).startswith("=") else 2
            else:
                # Numbered headings nest by their numbering; an unnumbered one is the title when nothing came
                # before it, else a top-level section.
                opening = not any(sec.blocks for sec in sections)
                level = 1 + depth if depth else (1 if opening else 2)
            level += messages > 0  # inside a message, under the message
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, line.strip()))
            sections.append(Section(heading_path=[h for _, h in stack], level=level))
            kind = "heading"
        sections[-1].blocks.append(Block(kind, s, lines[j - 1][1]))
        i = j
    return [sec for sec in sections if sec.blocks]
