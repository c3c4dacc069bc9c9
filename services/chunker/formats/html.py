"""HTML -> canonical text, with the stdlib parser (no dependency; it tolerates real-world markup).

Kept: h1-h6, p, li (ul/ol, nested), table/thead/tr/th/td, pre, and loose text in containers.
Dropped: script, style, nav and other non-content elements, and elements a browser does not render
(the `hidden` attribute, an inline `display: none` or `visibility: hidden`): text no reader sees must
not become an answer or its citation (hidden text is also the usual carrier of injected instructions).
Omitted end tags (</p>, </li>, </td>,
</tr>) are implied the way browsers do it: the next sibling closes the open one.
"""

import re
from html.parser import HTMLParser

from services.chunker.formats.canonical import CanonicalWriter
from services.chunker.formats.text import decode
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument

_SKIP = {"script", "style", "nav", "noscript", "template", "svg", "iframe", "object", "head"}
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
# Elements whose start and end separate blocks of text.
_BREAKING = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "header",
    "footer",
    "aside",
    "blockquote",
    "figure",
    "figcaption",
    "dl",
    "dt",
    "dd",
    "address",
    "details",
    "summary",
    "form",
    "fieldset",
    "hr",
    "body",
}
_CELL_BREAKS = {"br", "p", "div", "li", "tr", "td", "th"}
# Ends that browsers imply for a hidden element whose end tag was left out: a start tag among these
# closes it when nothing inside it is still open.
_IMPLIED_END = {
    "p": _BREAKING | set(_HEADINGS) | {"ul", "ol", "table", "pre"},
    "li": {"li"},
    "dt": {"dt", "dd"},
    "dd": {"dt", "dd"},
    "tr": {"tr"},
    "td": {"td", "th", "tr"},
    "th": {"td", "th", "tr"},
    "option": {"option"},
}
_INVISIBLE_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)", re.I
)
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_-]+)""", re.IGNORECASE)


class _Table:
    def __init__(self) -> None:
        self.rows: list[tuple[list[str], bool]] = []  # (cells, is a header row)
        self.row: list[str] | None = None
        self.row_is_header = False
        self.cell: list[str] | None = None
        self.in_thead = False
        self.stray: list[str] = []  # text outside any cell (a caption, or broken markup)

    def close_cell(self) -> None:
        if self.cell is not None and self.row is not None:
            self.row.append("".join(self.cell))
        self.cell = None

    def close_row(self) -> None:
        self.close_cell()
        if self.row:
            self.rows.append((self.row, self.in_thead or self.row_is_header))
        self.row = None

    def ordered_rows(self) -> list[list[str]]:
        """The first row is the Markdown header. When the table marks header rows (thead or all-th
        rows) and starts with one, it comes first; otherwise the first row is taken as the header."""
        if self.rows and self.rows[0][1]:
            return [c for c, h in self.rows if h] + [c for c, h in self.rows if not h]
        return [cells for cells, _ in self.rows]


def _renders_hidden(attrs) -> bool:
    """`hidden` (but not `hidden="until-found"`, whose text find-in-page reveals) or an inline style
    that hides the element. Class-based hiding is left alone: the stylesheet is not read."""
    values = {name.lower(): (value or "") for name, value in attrs}
    if "hidden" in values and values["hidden"].strip().lower() != "until-found":
        return True
    return bool(_INVISIBLE_STYLE.search(values.get("style", "")))


class _Hidden:
    """The element being left out, and the elements open inside it (to find its end)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.inner: list[str] = []

    def starts(self, tag: str) -> bool:
        """Takes a start tag inside; False when that tag implies the hidden element's end."""
        while self.inner and tag in _IMPLIED_END.get(self.inner[-1], ()):
            self.inner.pop()  # <tr hidden><td>..<tr>: the next row closes the cell, then the row
        if not self.inner and tag in _IMPLIED_END.get(self.tag, ()):
            return False
        if tag not in _VOID:
            self.inner.append(tag)
        return True

    def ends(self, tag: str) -> bool | None:
        """Takes an end tag: True when it closes the hidden element, None when it closes something
        around it (the hidden element's end tag was left out), False when it is inside."""
        if tag in self.inner:
            del self.inner[len(self.inner) - 1 - self.inner[::-1].index(tag) :]
            return False
        if tag == self.tag:
            return True
        return None if self.tag in _IMPLIED_END else False


class _Extractor(HTMLParser):
    def __init__(self, writer: CanonicalWriter) -> None:
        super().__init__(convert_charrefs=True)
        self.out = writer
        self.skip_depth = 0
        self.hidden: _Hidden | None = None
        self.buf: list[str] = []
        self.block: tuple[str, int] | None = None  # ("heading", level) | ("li", depth) | ("pre", 0) | ("p", 0)
        self.lists: list[dict] = []  # {"tag", "next" number, "open" item}
        self.item_marker = "-"
        self.tables: list[_Table] = []
        self.nested_tables = 0
        self.in_title = False
        self.html_title: list[str] = []

    @property
    def in_item(self) -> bool:
        return bool(self.lists) and self.lists[-1]["open"]

    def flush(self) -> None:
        text = "".join(self.buf)
        self.buf = []
        kind, arg = self.block or ("p", 0)
        if kind == "pre":
            self.out.code(text)
        elif kind == "heading":
            self.out.heading(arg, text)
        elif kind == "li":
            self.out.list_item(text, self.item_marker, arg)
        else:
            self.out.paragraph(text)

    def start_block(self, kind: str, arg: int = 0) -> None:
        self.flush()
        self.block = (kind, arg)

    def flush_stray(self, table: _Table) -> None:
        # Browsers move text that is not in a cell in front of the table; so does the canonical text
        # (the table itself is written when it closes).
        self.out.paragraph("".join(table.stray))
        table.stray = []

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self.in_title = True
        if tag == "body":
            self.skip_depth = 0  # an unclosed <head> ends where the body starts
        if self.skip_depth or tag in _SKIP:
            self.skip_depth += tag in _SKIP
            return
        if self.hidden is not None:
            if self.hidden.starts(tag):
                return
            self.hidden = None
        if tag not in _VOID and _renders_hidden(attrs):
            self.hidden = _Hidden(tag)
            return
        table = self.tables[-1] if self.tables else None
        if table is not None and table.cell is not None:
            # Inside a cell everything is inline text; a nested table is flattened into the cell.
            self.nested_tables += tag == "table"
            if tag in _CELL_BREAKS:
                table.cell.append(" ")
            return
        if table is not None and tag in ("caption", "thead", "tbody", "tfoot", "tr", "td", "th"):
            self.flush_stray(table)
        if tag in _HEADINGS:
            self.start_block("heading", _HEADINGS[tag])
        elif tag == "pre":
            self.start_block("pre")
        elif tag in ("ul", "ol"):
            self.flush()
            self.lists.append({"tag": tag, "next": _start_number(attrs), "open": False})
            self.block = None
        elif tag == "li":
            self.flush()  # an unclosed previous item ends here, with its own marker
            if self.lists and self.lists[-1]["tag"] == "ol":
                self.item_marker = f"{self.lists[-1]['next']}."
                self.lists[-1]["next"] += 1
            else:
                self.item_marker = "-"
            self.start_block("li", max(len(self.lists) - 1, 0))
            if self.lists:
                self.lists[-1]["open"] = True
        elif tag == "table":
            self.flush()
            self.block = None
            self.tables.append(_Table())
        elif table is not None and tag in ("thead", "tbody", "tfoot"):
            table.close_row()
            table.in_thead = tag == "thead"
        elif table is not None and tag == "tr":
            table.close_row()
            table.row, table.row_is_header = [], True
        elif table is not None and tag in ("td", "th"):
            table.close_cell()
            if table.row is None:
                table.row, table.row_is_header = [], True
            table.row_is_header = table.row_is_header and tag == "th"
            table.cell = []
        elif tag == "br":
            self.buf.append("\n")
        elif tag in _BREAKING:
            if self.in_item:
                self.buf.append(" ")  # <li><p>..</p></li>: the paragraph is the item's text
            else:
                self.start_block("p")

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_title = False
        if self.skip_depth:
            self.skip_depth -= tag in _SKIP
            return
        if self.hidden is not None:
            closes = self.hidden.ends(tag)
            if closes is not None:
                self.hidden = None if closes else self.hidden
                return
            self.hidden = None  # its end tag was left out: this one closes what holds it
        table = self.tables[-1] if self.tables else None
        if self.nested_tables:
            if tag == "table":
                self.nested_tables -= 1
            elif tag in _CELL_BREAKS and table is not None and table.cell is not None:
                table.cell.append(" ")
            return
        if table is not None and table.cell is not None and tag not in ("td", "th", "tr", "table"):
            return
        if tag in _HEADINGS or tag == "pre":
            self.flush()
            self.block = None
        elif tag == "li":
            self.flush()
            self.block = None
            if self.lists:
                self.lists[-1]["open"] = False
        elif tag in ("ul", "ol"):
            self.flush()
            if self.lists:
                self.lists.pop()
            if not self.lists:
                self.out.end_list()
            self.block = None
        elif table is not None and tag in ("td", "th"):
            table.close_cell()
        elif table is not None and tag == "tr":
            table.close_row()
        elif table is not None and tag in ("thead", "tbody", "tfoot", "caption"):
            table.close_row()
            table.in_thead = False
            self.flush_stray(table)
        elif table is not None and tag == "table":
            self.end_table()
        elif tag in _BREAKING and not self.in_item:
            self.flush()
            self.block = None

    def end_table(self) -> None:
        table = self.tables.pop()
        table.close_row()
        self.flush_stray(table)
        self.out.table(table.ordered_rows())

    def handle_data(self, data):
        if self.in_title:
            self.html_title.append(data)
        if self.skip_depth or self.hidden is not None:
            return
        table = self.tables[-1] if self.tables else None
        if table is not None:
            (table.cell if table.cell is not None else table.stray).append(data)
        elif self.block and self.block[0] == "pre":
            self.buf.append(data)
        else:
            # Source newlines are just whitespace in HTML; only <br> breaks a line.
            self.buf.append(re.sub(r"\s+", " ", data))

    def close(self):
        super().close()
        while self.tables:
            self.end_table()
        self.flush()


def _start_number(attrs) -> int:
    value = (dict(attrs).get("start") or "1").strip()
    return int(value) if value.isdigit() else 1


def _encoding(content: bytes) -> str:
    """A BOM or a <meta charset> declaration; UTF-8 otherwise."""
    if content.startswith(b"\xef\xbb\xbf"):
        return "utf-8"
    declared = _CHARSET.search(content[:4096])
    if declared:
        name = declared.group(1).decode("ascii").lower()
        try:
            "".encode(name)
            return name
        except LookupError:
            pass
    return "utf-8"


def parse_html(content: bytes, name: str) -> ParsedDocument:
    text = decode(content, name, "text/html", _encoding(content))
    writer = CanonicalWriter()
    extractor = _Extractor(writer)
    extractor.feed(text)
    extractor.close()
    parsed = writer.result()
    if not parsed.text.strip():
        raise InvalidArgument("document.content", f"{name} has no readable text (HTML without content)")
    html_title = re.sub(r"\s+", " ", "".join(extractor.html_title)).strip()
    parsed.title = parsed.title or html_title
    return parsed
