"""Excel workbooks (.xlsx, via openpyxl): each visible worksheet is a section under the sheet's name holding
its cells as one pipe table, the first non-empty row the header, so rows are split and answered under their
column names as CSV rows are.

Cells are read as Excel last saved them (`data_only`: a formula's cached value; a file whose formulas were
never calculated has empty cells there). Dates are written ISO (`2026-03-01`, with the time when there is
one), whole numbers without a trailing `.0`. Hidden and very hidden sheets are not read: workbooks keep lookup
tables and scratch work there that nobody reading the workbook sees. Empty leading/trailing rows and columns
(a table that starts at C4) are dropped. The title is the workbook's own (File > Properties), else the file
name.
"""

import datetime

from services.chunker.formats.canonical import CanonicalWriter, file_title
from services.chunker.formats.packages import open_package
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime.datetime):
        return value.date().isoformat() if value.time() == datetime.time() else value.isoformat(sep=" ")
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _table(rows: list[list[str]]) -> list[list[str]]:
    """The rows with the empty rows and the empty columns around the data cut away."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    used = [i for row in rows for i, cell in enumerate(row) if cell.strip()]
    if not used:
        return []
    first, last = min(used), max(used)
    return [row[first : last + 1] for row in rows]


def _open(content: bytes, name: str):
    import openpyxl

    def load(data):
        return openpyxl.load_workbook(data, read_only=True, data_only=True)

    return open_package(load, content, name, "XLSX workbook", ())


def parse_xlsx(content: bytes, name: str) -> ParsedDocument:
    workbook = _open(content, name)
    writer = CanonicalWriter()
    try:
        for sheet in workbook.worksheets:
            if sheet.sheet_state != "visible":
                continue
            rows = _table([[_text(v) for v in row] for row in sheet.iter_rows(values_only=True)])
            if rows:
                writer.heading(1, sheet.title)
                writer.table(rows)
        title = (workbook.properties.title or "").strip()
    except Exception as exc:  # noqa: BLE001 - a sheet's XML that does not parse fails this document only
        raise InvalidArgument(
            "document.content", f"{name} is not a readable XLSX workbook ({type(exc).__name__}: {exc})"
        ) from None
    finally:
        workbook.close()
    parsed = writer.result(title=title or file_title(name))
    if not parsed.text.strip():
        raise InvalidArgument("document.content", f"{name} has no text in a visible sheet")
    return parsed
