"""FTS5's bm25() computed from its own postings, top k only, with the filters as masks.

FTS5 ranks a query by computing bm25() for every row that matches any of its phrases before `ORDER BY ...
LIMIT` keeps k: at a million chunks that is most of a query's time. The embedded index instead reads, for
each query phrase, the phrase's postings from the FTS5 index itself (an `fts5vocab` 'instance' table: row id
and token offset of every occurrence) in the query's read transaction, and scores the rows in numpy with
FTS5's exact formula (sqlite/ext/fts5/fts5_aux.c, fts5Bm25Function):

    score(row) = sum over phrases p of idf(p) * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl))

with k1 = 1.2, b = 0.75, f the phrase's occurrences in the row, D the row's tokens (FTS5's docsize),
avgdl = the table's tokens / rows and idf(p) = log((N - n + 0.5) / (n + 0.5)) floored at 1e-6, where N and
n (rows holding the phrase) count the whole FTS table, every tenant, as FTS5 does. Phrases are tokenized by an
FTS5 table with the same tokenizer, so they are FTS5's tokens exactly. Nothing here is cached between
queries: what is read is the snapshot the query's transaction sees.
"""

import sqlite3
import threading
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

# The tokenizer of the index's chunks_fts table (shared/index/embedded.py's schema uses this constant).
FTS_TOKENIZE = "porter unicode61"
K1 = 1.2
B = 0.75
IDF_FLOOR = 1e-6
# Token offsets within a row are below this (FTS5 stores them as 31-bit integers): a (row, offset)
# pair is packed into one int64 to intersect a phrase's tokens by position.
_OFFSET_BITS = 31

_tokenizers = threading.local()


def _tokenizer_connection() -> sqlite3.Connection:
    conn = getattr(_tokenizers, "conn", None)
    if conn is None:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{FTS_TOKENIZE}')")
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        _tokenizers.conn = conn
    return conn


@lru_cache(maxsize=65536)
def phrase_tokens(phrase: str) -> tuple[str, ...]:
    """The tokens FTS5 makes of a phrase (its own tokenizer, in a private in-memory table), in order."""
    conn = _tokenizer_connection()
    with conn:
        conn.execute("DELETE FROM t")
        conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?)", (phrase,))
        rows = conn.execute("SELECT term, offset FROM v").fetchall()
        conn.execute("DELETE FROM t")
    return tuple(term for term, _ in sorted(rows, key=lambda r: r[1]))


def vocabulary(table: str = "chunks_fts") -> tuple[str, str]:
    """(name, CREATE statement) of the `fts5vocab` 'instance' table over `table` that postings are read from.
    It is a temp table, so each connection needs its own: run the statement once when the connection opens.
    FTS5 looks `table` up when the vocabulary is queried, not when it is created, so it is right on a
    connection opened before `table` existed and on a file another process made or rebuilt."""
    name = f"{table}_instances"
    return name, f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{name} USING fts5vocab(main, '{table}', 'instance')"


def _varints(blob: bytes) -> list[int]:
    """SQLite / FTS5 varints (big-endian, 7 bits a byte, the 9th byte whole)."""
    values, i = [], 0
    while i < len(blob):
        value = 0
        for j in range(9):
            byte = blob[i]
            i += 1
            if j == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        values.append(value)
    return values


def docsize(blob: bytes | None) -> int:
    """A row's token count from its FTS5 docsize record (one varint per column; the table has one)."""
    return _varints(blob)[0] if blob else 0


def table_totals(conn: sqlite3.Connection, table: str = "chunks_fts") -> tuple[int, int]:
    """(rows, tokens) of the whole FTS table: FTS5's 'averages' record (id 1 of its data table), which
    bm25() reads for N and avgdl."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id=1").fetchone()
    if row is None or not row[0]:
        return 0, 0
    values = _varints(row[0])
    return values[0], values[1] if len(values) > 1 else 0


@dataclass
class PhrasePostings:
    """The rows (sorted, the whole table) holding a phrase, and its occurrences in each."""

    rowids: np.ndarray
    freqs: np.ndarray


def _instances(conn: sqlite3.Connection, vocabulary: str, term: str, with_offsets: bool) -> np.ndarray:
    """Every occurrence of one token: its row ids (with offsets: row << 31 | offset), in index order."""
    value = f"(doc << {_OFFSET_BITS}) | offset" if with_offsets else "doc"
    text = conn.execute(f"SELECT group_concat({value}) FROM {vocabulary} WHERE term=?", (term,)).fetchone()[0]
    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(text, dtype=np.int64, sep=",")  # text mode (not the deprecated binary one)


def phrase_postings(conn: sqlite3.Connection, vocabulary: str, tokens: tuple[str, ...]) -> PhrasePostings:
    """A phrase's postings read from the FTS5 index: one token's occurrences per row, or, for several
    tokens, the positions where they follow each other (each start one occurrence, as FTS5 counts them)."""
    if len(tokens) == 1:
        hits = _instances(conn, vocabulary, tokens[0], with_offsets=False)
        if len(hits) > 1 and not bool(np.all(hits[1:] >= hits[:-1])):  # FTS5 returns them by row id
            hits = np.sort(hits)
    else:
        starts = np.unique(_instances(conn, vocabulary, tokens[0], with_offsets=True))
        for step, token in enumerate(tokens[1:], start=1):
            if len(starts) == 0:
                break
            following = np.unique(_instances(conn, vocabulary, token, with_offsets=True)) - step
            starts = starts[np.isin(starts, following, assume_unique=True)]
        hits = starts >> _OFFSET_BITS
    if len(hits) == 0:
        return PhrasePostings(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
    first = np.flatnonzero(np.concatenate(([True], hits[1:] != hits[:-1])))
    counts = np.diff(np.append(first, len(hits)))
    return PhrasePostings(hits[first], counts.astype(np.float64))


def idf(rows: int, hits: int) -> float:
    value = float(np.log((rows - hits + 0.5) / (hits + 0.5)))
    return value if value > 0.0 else IDF_FLOOR


@dataclass
class Matches:
    """One query phrase's postings narrowed to the rows that pass the filters: their row ids, the phrase's
    occurrences and the rows' token counts, and the phrase's idf."""

    rowids: np.ndarray
    freqs: np.ndarray
    doclen: np.ndarray
    idf: float


def top_k(phrases: list[Matches], avgdl: float, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(row ids, scores) of the best `count` rows, best first (ties by row id)."""
    if not phrases or count <= 0 or sum(len(p.rowids) for p in phrases) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    parts = []
    for p in phrases:
        norm = K1 * (1 - B + B * p.doclen.astype(np.float64) / avgdl)
        parts.append(p.idf * ((p.freqs * (K1 + 1.0)) / (p.freqs + norm)))
    # A row's phrase scores add up in the query's phrase order, as FTS5 sums them.
    rows, where = np.unique(np.concatenate([p.rowids for p in phrases]), return_inverse=True)
    scores = np.bincount(where, weights=np.concatenate(parts), minlength=len(rows))
    if count < len(rows):
        # The rows above the k-th score, then the lowest row ids of those tied with it (as FTS5 picks them).
        kth = -np.partition(-scores, count - 1)[count - 1]
        above = np.flatnonzero(scores > kth)
        tied = np.flatnonzero(scores == kth)[: count - len(above)]  # `rows` is sorted
        best = np.concatenate((above, tied))
        rows, scores = rows[best], scores[best]
    order = np.lexsort((rows, -scores))
    return rows[order], scores[order]
