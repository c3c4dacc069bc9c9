"""PDF text layer -> canonical text, with pypdf (BSD; no AGPL renderer).

A PDF has no paragraphs or tables, only positioned text, so structure is inferred, best effort:
- text fragments (pypdf's visitor: position, font size, font name) are grouped into lines by y;
- a line in a larger font than the body text is a heading (one level per distinct size); a short
  bold body-size line that starts with a clause number ("7.", "7.2") is a heading below those, and so
  is any short bold body-size line that is not a label ("Note:") or a bold sentence running on;
- a run of consecutive lines whose fragments start at the same x positions (columns) is a table,
  its first line the header;
- lines starting with a bullet or a clause/list number are list items; other lines join into
  paragraphs until the vertical gap grows;
- running headers and footers (page numbers, a line repeated in the margins of several pages)
  are dropped;
- a two-column page (prose on both sides of a gutter, not a table's columns) is read left column, then
  right column, between any lines that run across the page.
pypdf's visitor is known to misplace some fragments in unusual PDFs; their text is kept, perhaps
out of order, rather than guessed away.
Pages are written in order and a page break ends the block, with two exceptions: a table whose
first rows on the next page repeat its header or fall into the same columns continues as one table
(the repeated header is dropped), and a paragraph cut mid-sentence by the break continues.
"""

import dataclasses
import io
import logging
import re
from collections import Counter

from pypdf import PasswordType, PdfReader
from pypdf.errors import PdfReadError

from services.chunker.formats.canonical import CanonicalWriter
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument

# pypdf logs every repair of a damaged file; the document either parses or fails with our message.
logging.getLogger("pypdf").setLevel(logging.ERROR)

_BOLD = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_BULLET = re.compile(r"^[•◦▪▫●○■□‣⁃–*-]\s+")
# "1." / "1)" / "7.2" / "(a)" / "a)" / "(iv)"; a bare number ("2024 was ...") is not a list marker.
_NUMBERED = re.compile(r"^(\d+[.)]|\d+(?:\.\d+)+\.?|\(?[a-z]\)|\([ivx]+\))\s+\S")
_CLAUSE_HEADING = re.compile(r"^\d+(?:\.\d+)*\.?\s+\S")
_PAGE_NUMBER = re.compile(r"^(page\s+)?\d+(\s*(of|/)\s*\d+)?$", re.IGNORECASE)
_MARGIN = 0.08  # top and bottom share of the page where running headers and footers live
_TOL = 3.0  # points: how far apart two x positions may be and still start the same column


@dataclasses.dataclass
class _Frag:
    x: float
    y: float
    text: str
    size: float
    bold: bool


@dataclasses.dataclass
class _Line:
    y: float
    frags: list[_Frag]

    @property
    def size(self) -> float:
        return max(f.size for f in self.frags)

    @property
    def bold(self) -> bool:
        return all(f.bold for f in self.frags)

    @property
    def x(self) -> float:
        return self.frags[0].x

    @property
    def text(self) -> str:
        return _join(self.frags)

    @property
    def starts(self) -> list[float]:
        return [f.x for f in self.frags]


def _join(frags: list[_Frag]) -> str:
    # pypdf reports where a fragment starts, not its width, so fragments are joined by their text:
    # a space unless one side already has one or the next begins with punctuation.
    out = ""
    for frag in frags:
        if out and not out.endswith(" ") and not frag.text.startswith((" ", ".", ",", ";", ":", "!", "?", ")")):
            out += " "
        out += frag.text
    return re.sub(r"\s+", " ", out).strip()


@dataclasses.dataclass
class _Element:
    kind: str  # heading | paragraph | list_item | table
    text: str = ""
    level: int = 0
    marker: str = "-"
    rows: list[list[str]] = dataclasses.field(default_factory=list)
    anchors: list[float] = dataclasses.field(default_factory=list)
    last_y: float = 0.0
    size: float = 0.0


def _open(content: bytes, name: str) -> PdfReader:
    try:
        reader = PdfReader(io.BytesIO(content))
        if reader.is_encrypted:
            # An owner-password-only PDF (permissions, no open password) still opens with "".
            try:
                opened = reader.decrypt("")
            except Exception:  # noqa: BLE001 - e.g. AES without a crypto backend: still "cannot open"
                opened = PasswordType.NOT_DECRYPTED
            if not opened:
                raise InvalidArgument("document.content", f"{name} is an encrypted PDF (password required)")
        len(reader.pages)
    except InvalidArgument:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError) as exc:
        raise InvalidArgument(
            "document.content", f"{name} is not a readable PDF ({exc or type(exc).__name__})"
        ) from None
    return reader


def _page_lines(page) -> list[_Line]:
    frags: list[_Frag] = []

    def visit(text, cm, tm, font, size):
        if not text or not text.strip():
            return
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        scale = abs(tm[3] * cm[3]) or 1.0
        bold = bool(font) and bool(_BOLD.search(str(font.get("/BaseFont", ""))))
        for i, part in enumerate(text.split("\n")):
            if part.strip():
                frags.append(_Frag(x, y - i * size * scale * 1.2, part.replace("\t", " "), size * scale, bold))

    page.extract_text(visitor_text=visit)
    frags.sort(key=lambda f: -f.y)
    lines: list[_Line] = []
    for frag in frags:
        if lines and abs(lines[-1].y - frag.y) <= max(2.0, 0.3 * frag.size):
            lines[-1].frags.append(frag)
        else:
            lines.append(_Line(frag.y, [frag]))
    for line in lines:
        line.frags.sort(key=lambda f: f.x)
    return lines


def _running_key(line: _Line) -> str:
    return re.sub(r"\d+", "#", line.text.lower())  # "Page 3" and "Page 4" are the same running line


def _drop_running_lines(pages: list[list[_Line]], boxes: list[tuple[float, float]]) -> None:
    """Page numbers, and lines repeated in the top or bottom margin of several pages, are not content."""

    def in_margin(line: _Line, box: tuple[float, float]) -> bool:
        if line.y == 0 and line.x == 0:
            return False  # pypdf reports some fragments at the origin; such text is kept, not guessed away
        bottom, top = box
        return line.y > top - (top - bottom) * _MARGIN or line.y < bottom + (top - bottom) * _MARGIN

    seen = Counter(
        key
        for lines, box in zip(pages, boxes, strict=True)
        for key in {_running_key(line) for line in lines if in_margin(line, box)}
    )
    for i, (lines, box) in enumerate(zip(pages, boxes, strict=True)):
        pages[i] = [
            line
            for line in lines
            if not (in_margin(line, box) and (_PAGE_NUMBER.match(line.text) or seen[_running_key(line)] > 1))
        ]


def _end(frag: _Frag) -> float:
    """Where a fragment's text ends, estimated: pypdf reports where it starts, not its width (half an em a
    character, about a proportional font's average)."""
    return frag.x + 0.5 * frag.size * len(frag.text)


@dataclasses.dataclass(frozen=True)
class _Columns:
    left: float  # the left column's margin
    right: float  # where the right column starts

    def sides(self, line: _Line) -> tuple[list[_Frag], list[_Frag]]:
        return [f for f in line.frags if f.x < self.right], [f for f in line.frags if f.x >= self.right]

    def crosses(self, lhs: list[_Frag]) -> bool:
        """Left-side text running well past the gutter: a title or a paragraph across the page."""
        return bool(lhs) and max(map(_end, lhs)) > self.right + 0.2 * (self.right - self.left)


def _columns(lines: list[_Line], width: float) -> _Columns | None:
    """The two columns of a two-column page, or None for one column.

    Two columns show as fragments starting at one x in the middle of the page (the right column's margin),
    with the prose on each side running most of the way to the gutter or the right edge. A table's column
    starts at one x too, but its cells are set apart on the line or do not run on like prose."""
    if len(lines) < 6 or width <= 0:
        return None
    starts = Counter(round(f.x) for line in lines for f in line.frags if 0.3 * width <= f.x <= 0.7 * width)
    left_starts = Counter(round(line.x) for line in lines if line.x < 0.3 * width)
    if not starts or not left_starts:
        return None
    right, count = starts.most_common(1)[0]
    if count < 3:
        return None
    columns = _Columns(left_starts.most_common(1)[0][0], right - _TOL)
    left_runs, right_runs, crossing, cells = [], [], 0, 0
    for line in lines:
        lhs, rhs = columns.sides(line)
        if columns.crosses(lhs):
            crossing += 1
            continue
        cells += _spaced(lhs) or _spaced(rhs)
        if lhs:
            left_runs.append(max(map(_end, lhs)) - columns.left)
        if rhs:
            right_runs.append(max(map(_end, rhs)) - right)
    # A line whose side holds fragments set apart like cells is a table's row: its columns are not text columns.
    if crossing > 0.3 * len(lines) or cells > 0.2 * len(lines) or len(left_runs) < 3 or len(right_runs) < 3:
        return None
    # Prose fills most of its lines (headings and a paragraph's last line do not): the upper quartile of how far
    # each side's lines run, against the column's width (margins alike on both sides of the page).
    left_width, right_width = right - columns.left, width - columns.left - right
    if _upper_quartile(left_runs) < 0.6 * left_width or _upper_quartile(right_runs) < 0.6 * right_width:
        return None
    return columns


def _spaced(frags: list[_Frag]) -> bool:
    """Fragments on one line with a gap of two ems or more between one's end and the next's start."""
    return any(b.x - _end(a) >= 2 * a.size for a, b in zip(frags, frags[1:], strict=False))


def _upper_quartile(values: list[float]) -> float:
    return sorted(values)[(3 * len(values)) // 4]


def _reading_frames(lines: list[_Line], width: float) -> list[list[_Line]]:
    """The page's lines in reading order, as frames read one after another (like pages): one frame for a
    one-column page; on a two-column page, between lines that cross the gutter, the left column's lines and
    then the right column's. Grouped by height alone, the two columns' lines interleave (or merge where their
    baselines meet), and a paragraph reads one line from each column in turn."""
    columns = _columns(lines, width)
    if columns is None:
        return [lines]
    frames: list[list[_Line]] = []
    left: list[_Line] = []
    right: list[_Line] = []
    for line in lines:
        lhs, rhs = columns.sides(line)
        if columns.crosses(lhs):
            frames += [frame for frame in (left, right, [line]) if frame]
            left, right = [], []
            continue
        if lhs:
            left.append(_Line(line.y, lhs))
        if rhs:
            right.append(_Line(line.y, rhs))
    return frames + [frame for frame in (left, right) if frame]


def _near(x: float, anchors: list[float]) -> bool:
    return any(abs(x - a) <= _TOL for a in anchors)


def _row(line: _Line, anchors: list[float]) -> list[str] | None:
    """The line as a row of a table whose columns start at `anchors`, or None when it is not one.

    Table cells are separate fragments that start at the column positions; a prose line starts at the
    margin and any inline font change does not line up with the columns, so at least two of the
    line's fragments must start at an anchor. A fragment between anchors joins the cell before it.
    """
    if len(line.frags) < 2 or sum(_near(x, anchors) for x in line.starts) < 2:
        return None
    cells: list[list[_Frag]] = [[] for _ in anchors]
    for frag in line.frags:
        col = max((i for i, a in enumerate(anchors) if frag.x >= a - _TOL), default=0)
        cells[col].append(frag)
    return [_join(c) for c in cells]


def _page_elements(
    lines: list[_Line], heading_sizes: list[float], body_size: float, open_table: _Element | None
) -> list[_Element]:
    elements: list[_Element] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        # A table: this line and the next fall into the same columns (or continue the previous page's table).
        if open_table is not None and i == 0 and _row(line, open_table.anchors) is not None:
            table = _Element("table", rows=[], anchors=open_table.anchors)
        else:
            anchors = line.starts
            table = None
            first = _row(line, anchors) if len(anchors) >= 2 else None
            if first is not None and i + 1 < len(lines) and _row(lines[i + 1], anchors) is not None:
                table = _Element("table", rows=[first], anchors=anchors)
                i += 1
        if table is not None:
            while i < len(lines) and (row := _row(lines[i], table.anchors)) is not None:
                table.rows.append(row)
                i += 1
            elements.append(table)
            continue
        text = line.text
        continued = i + 1 < len(lines) and lines[i + 1].text[:1].islower()  # a sentence wrapped onto the next line
        level = _heading_level(line, heading_sizes, body_size, continued)
        prev = elements[-1] if elements else None
        gap = (prev.last_y - line.y) if prev is not None else 0.0
        if level:
            if prev and prev.kind == "heading" and prev.level == level and gap < 1.6 * line.size:
                prev.text += " " + text  # a heading wrapped onto two lines
            else:
                elements.append(_Element("heading", text, level=level))
        elif _BULLET.match(text):
            elements.append(_Element("list_item", _BULLET.sub("", text), marker="-"))
        elif _NUMBERED.match(text):
            marker, rest = text.split(None, 1)
            elements.append(_Element("list_item", rest, marker=marker))
        elif (
            prev
            and prev.kind in ("paragraph", "list_item")
            and gap < 1.45 * line.size
            and abs(prev.size - line.size) < 0.5
        ):
            prev.text = _join_lines(prev.text, text)
        else:
            elements.append(_Element("paragraph", text))
        elements[-1].last_y = line.y
        elements[-1].size = line.size
        i += 1
    return elements


# Where a line ending in a hyphen met the next line's word: "recover-" + "able".
_BREAK = "\u00ad"
_HYPHENATED = re.compile(rf"([A-Za-z]+){_BREAK}([a-z]+)")
_WORD = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)*")


def _join_lines(text: str, line: str) -> str:
    """A paragraph's next line; a word split at the line end by a hyphen is marked for _mend_hyphenation."""
    if re.search(r"[A-Za-z]-$", text) and line[:1].islower():
        return text[:-1] + _BREAK + line
    return text + " " + line


def _mend_hyphenation(elements: list[_Element]) -> None:
    """Words split at a line end ("recover-" / "able") read whole ("recoverable"); a compound the document
    writes with its hyphen elsewhere ("on-" / "call" where "on-call" appears) keeps it."""
    hyphenated = {
        word.lower() for el in elements for word in _WORD.findall(el.text.replace(_BREAK, " ")) if "-" in word
    }

    def mend(match: re.Match) -> str:
        compound = f"{match.group(1)}-{match.group(2)}"
        return compound if compound.lower() in hyphenated else match.group(1) + match.group(2)

    for el in elements:
        el.text = _HYPHENATED.sub(mend, el.text).replace(_BREAK, "-")


def _heading_level(line: _Line, heading_sizes: list[float], body_size: float, continued: bool = False) -> int:
    text = line.text
    if len(text) > 150 or text.endswith((".", ";", ",")):
        return 0
    for level, size in enumerate(heading_sizes, start=1):
        if abs(line.size - size) < 0.5:
            return level
    if line.bold and abs(line.size - body_size) < 0.5 and _CLAUSE_HEADING.match(text) and len(text) <= 90:
        number = text.split(None, 1)[0].rstrip(".")
        return min(len(heading_sizes) + number.count(".") + 1, 6)
    # A short bold line at body size is a heading too (documents exported from Word with headings set in bold
    # rather than in a heading style); not a bold label ending in a colon ("Note:"), nor a line of a bold
    # paragraph whose sentence runs on.
    if (
        line.bold
        and abs(line.size - body_size) < 0.5
        and len(text) <= 60
        and len(text.split()) <= 8
        and not text.endswith(":")
        and not continued
    ):
        return min(len(heading_sizes) + 1, 6)
    return 0


def parse_pdf(content: bytes, name: str) -> ParsedDocument:
    reader = _open(content, name)
    try:
        pages = [_page_lines(page) for page in reader.pages]
    except Exception as exc:  # noqa: BLE001 - a broken content stream fails this document only
        raise InvalidArgument("document.content", f"{name} is not a readable PDF ({exc})") from None
    chars: Counter[float] = Counter()
    for lines in pages:
        for line in lines:
            for frag in line.frags:
                chars[round(frag.size, 1)] += len(frag.text.strip())
    if not chars:
        raise InvalidArgument(
            "document.content", f"{name} has no text layer (a scanned or image-only PDF?); run OCR on it first"
        )
    _drop_running_lines(pages, [(float(p.mediabox.bottom), float(p.mediabox.top)) for p in reader.pages])
    body_size = chars.most_common(1)[0][0]
    # Sizes clearly above the body text that start a short line are heading levels, largest first.
    heading_sizes = sorted(
        {
            round(line.size, 1)
            for lines in pages
            for line in lines
            if line.size >= body_size + 1.0 and len(line.text) <= 150
        },
        reverse=True,
    )[:6]

    frames = [
        frame
        for lines, page in zip(pages, reader.pages, strict=True)
        for frame in _reading_frames(lines, float(page.mediabox.width))
    ]
    elements: list[_Element] = []
    for lines in frames:
        open_table = elements[-1] if elements and elements[-1].kind == "table" else None
        page = _page_elements(lines, heading_sizes, body_size, open_table)
        if page and open_table is not None and page[0].kind == "table" and page[0].anchors is open_table.anchors:
            # The first rows of this page fall into the previous table's columns: the same table.
            first, *rest = page.pop(0).rows
            open_table.rows += rest if first == open_table.rows[0] else [first, *rest]
        elif (
            page
            and elements
            and page[0].kind == "paragraph"
            and elements[-1].kind in ("paragraph", "list_item")
            and not elements[-1].text.endswith((".", "!", "?", ":"))
            and page[0].text[:1].islower()
        ):
            elements[-1].text = _join_lines(elements[-1].text, page.pop(0).text)  # a sentence cut by the break
        elements += page

    _mend_hyphenation(elements)
    writer = CanonicalWriter()
    for el in elements:
        if el.kind == "heading":
            writer.heading(el.level, el.text)
        elif el.kind == "table":
            writer.table(el.rows)
        elif el.kind == "list_item":
            writer.list_item(el.text, el.marker)
        else:
            writer.paragraph(el.text)
    parsed = writer.result()
    meta_title = (reader.metadata.title if reader.metadata else "") or ""
    if meta_title.strip().lower() not in ("", "untitled", "(anonymous)", "anonymous"):
        parsed.title = parsed.title or meta_title.strip()
    return parsed
