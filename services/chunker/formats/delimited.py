"""CSV and TSV: a table exported from a spreadsheet or a database (an FAQ, a price list, a runbook index).

The file becomes one pipe table whose first row is the header, so the chunker splits it by rows with the
header repeated in every piece's embed text, and an answer cites a row read with its header, as for a
Markdown table. The delimiter is sniffed from the start of the file among `,`, `;`, tab and `|` (European
spreadsheets write `;`); a file that gives no clear answer is read with the extension's own delimiter.
Quoted cells may hold delimiters and line breaks (Python's csv module reads them).
"""

import csv
import io
import re

from services.chunker.content_types import CSV, TSV
from services.chunker.formats.canonical import CanonicalWriter, file_title
from services.chunker.formats.text import decode
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument

_SNIFF_BYTES = 64 * 1024
_DELIMITERS = ",;\t|"
_SEP_HINT = re.compile(r"\Asep=(.)\r?\n")
# The csv module refuses a cell over 128 KiB by default; a knowledge-base export's article body can be longer, and
# the chunker's own document size limit already bounds the whole file.
csv.field_size_limit(2**31 - 1)


def _dialect(text: str, default: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(text[:_SNIFF_BYTES], delimiters=_DELIMITERS)
    except csv.Error:
        return csv.excel_tab if default == "\t" else csv.excel


def _parse(content: bytes, name: str, kind: str, default: str) -> ParsedDocument:
    text = decode(content, name, kind)
    # Excel writes, and honours, a first line `sep=;` naming the delimiter: it is an instruction, not a row.
    hint = _SEP_HINT.match(text)
    if hint:
        text = text[hint.end() :]
    dialect = csv.excel if hint else _dialect(text, default)
    delimiter = hint.group(1) if hint else dialect.delimiter
    try:
        rows = [row for row in csv.reader(io.StringIO(text, newline=""), dialect, delimiter=delimiter) if any(row)]
    except csv.Error as exc:
        raise InvalidArgument("document.content", f"{name} is not readable as {kind} ({exc})") from None
    if not any(cell.strip() for row in rows for cell in row):
        raise InvalidArgument("document.content", f"{name} has no text")
    writer = CanonicalWriter()
    writer.table(rows)
    return writer.result(title=file_title(name))


def parse_csv(content: bytes, name: str) -> ParsedDocument:
    return _parse(content, name, CSV, ",")


def parse_tsv(content: bytes, name: str) -> ParsedDocument:
    return _parse(content, name, TSV, "\t")
