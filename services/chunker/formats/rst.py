"""reStructuredText (.rst, with docutils, public domain/BSD) -> canonical text: the document title and the sections'
titles as headings at their depth, paragraphs, bullet and enumerated lists at their level, tables with their
header row, literal blocks as code, definition lists and field lists as "term: definition", admonitions
("note", "warning", ...) as paragraphs that say which. Engineering documentation written for Sphinx is in this
format; read as Markdown its sections were paragraphs with rows of '=' under them.

Only the text is read: directives that reach outside the file (`include`, `raw`, `csv-table :file:`) are off, so
a document cannot pull a file of the server into the index, and docutils' warnings about the markup are not text."""

from docutils import nodes
from docutils.core import publish_doctree
from docutils.utils import SystemMessage

from services.chunker.formats.canonical import CanonicalWriter
from services.chunker.formats.text import decode
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument

_SETTINGS = {
    "_disable_config": True,  # no docutils.conf from the server's working directory or home
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "report_level": 5,  # no system messages in the tree's text
    "halt_level": 5,
    "warning_stream": False,
    "input_encoding": "unicode",
}
_ADMONITIONS = (nodes.admonition, nodes.Admonition)


def _text(node: nodes.Node) -> str:
    return " ".join(node.astext().split())


class _Reader:
    def __init__(self, writer: CanonicalWriter) -> None:
        self.out = writer

    def block(self, node: nodes.Node, depth: int, lists: int) -> None:
        if isinstance(node, nodes.system_message | nodes.comment | nodes.substitution_definition | nodes.target):
            return
        if isinstance(node, nodes.section):
            title = next((c for c in node.children if isinstance(c, nodes.title)), None)
            self.out.heading(min(depth + 1, 6), _text(title) if title is not None else "")
            for child in node.children:
                if child is not title:
                    self.block(child, depth + 1, 0)
        elif isinstance(node, nodes.title | nodes.subtitle):
            self.out.heading(min(depth + 1, 6), _text(node))
        elif isinstance(node, nodes.paragraph | nodes.line_block | nodes.rubric | nodes.attribution):
            self.out.paragraph(_text(node))
        elif isinstance(node, nodes.bullet_list | nodes.enumerated_list):
            for number, item in enumerate(node.children, start=int(node.get("start", 1))):
                marker = f"{number}." if isinstance(node, nodes.enumerated_list) else "-"
                own = [c for c in item.children if not isinstance(c, nodes.bullet_list | nodes.enumerated_list)]
                self.out.list_item(" ".join(_text(c) for c in own), marker, lists)
                for inner in item.children:
                    if isinstance(inner, nodes.bullet_list | nodes.enumerated_list):
                        self.block(inner, depth, lists + 1)
            if lists == 0:
                self.out.end_list()
        elif isinstance(node, nodes.literal_block | nodes.doctest_block):
            self.out.code(node.astext())
        elif isinstance(node, nodes.table):
            self.out.table([[_text(entry) for entry in row.children] for row in node.findall(nodes.row)])
        elif isinstance(node, nodes.definition_list):
            for item in node.children:
                term = " ".join(_text(c) for c in item.children if isinstance(c, nodes.term | nodes.classifier))
                definition = " ".join(_text(c) for c in item.children if isinstance(c, nodes.definition))
                self.out.paragraph(f"{term}: {definition}")
        elif isinstance(node, nodes.field_list | nodes.docinfo):
            for field in node.children:
                if isinstance(field, nodes.field):
                    name, body = field.children[0], field.children[1]
                    self.out.paragraph(f"{_text(name)}: {_text(body)}")
                else:  # docinfo's own elements: <version>2.1</version>, <author>...
                    self.out.paragraph(f"{field.tagname.capitalize()}: {_text(field)}")
        elif isinstance(node, _ADMONITIONS):
            kind = node.tagname.capitalize() if node.tagname != "admonition" else ""
            title = next((_text(c) for c in node.children if isinstance(c, nodes.title)), kind)
            body = " ".join(_text(c) for c in node.children if not isinstance(c, nodes.title))
            self.out.paragraph(f"{title}: {body}" if title else body)
        elif isinstance(node, nodes.Element):
            for child in node.children:  # containers: block quotes, topics, compound paragraphs
                self.block(child, depth, lists)


def parse_rst(content: bytes, name: str) -> ParsedDocument:
    source = decode(content, name, "text/x-rst")
    try:
        tree = publish_doctree(source, source_path=name, settings_overrides=_SETTINGS)
    except (SystemMessage, ValueError, AttributeError, IndexError) as exc:
        raise InvalidArgument("document.content", f"{name} is not readable reStructuredText ({exc})") from None
    writer = CanonicalWriter()
    reader = _Reader(writer)
    # docutils lifts a lone top section into the document's title: its sections are then one level below it.
    title = next((c for c in tree.children if isinstance(c, nodes.title)), None)
    if title is not None:
        writer.heading(1, _text(title))
    for child in tree.children:
        if child is not title:
            reader.block(child, 1 if title is not None else 0, 0)
    parsed = writer.result(title=str(tree.get("title", "")))
    if not parsed.text.strip():
        raise InvalidArgument("document.content", f"{name} has no readable text")
    return parsed
