"""Jupyter notebooks (.ipynb, nbformat 4 JSON) -> canonical text: the Markdown cells as Markdown (their headings
open sections; comments and inlined base64 images blanked as in .md files), each code cell as a fenced block in
the notebook's language. Outputs are not read: they are results of a run (tables of data, tracebacks, progress
bars), often large, and not what the author wrote. The title is the notebook's first heading, else the file
name."""

from services.chunker.formats.canonical import file_title
from services.chunker.formats.text import blank_unrendered, first_heading, read_json
from services.chunker.structure import ParsedDocument, parse_markdown
from shared.errors import InvalidArgument


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def parse_notebook(content: bytes, name: str) -> ParsedDocument:
    notebook = read_json(content, name, "application/x-ipynb+json")
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(notebook, dict) or not isinstance(cells, list):
        raise InvalidArgument("document.content", f"{name} is not a Jupyter notebook (no 'cells' list)")
    language = str(((notebook.get("metadata") or {}).get("language_info") or {}).get("name") or "")
    parts = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        text = _source(cell).strip("\n")
        if not text.strip():
            continue
        if cell.get("cell_type") == "markdown":
            parts.append(blank_unrendered(text))
        elif cell.get("cell_type") == "code":
            fence = "~~~" if "```" in text else "```"  # parse_markdown ends a fence at its marker
            parts.append(f"{fence}{language}\n{text}\n{fence}")
    text = "\n\n".join(parts) + "\n"
    if not text.strip():
        raise InvalidArgument("document.content", f"{name} has no text in its Markdown or code cells")
    return ParsedDocument(text=text, sections=parse_markdown(text), title=first_heading(text) or file_title(name))
