"""Structure-first chunking: pack a section's blocks into chunks that fit the embedder's window.

Documents are split on their own boundaries (sections, then blocks). Only a block that alone
exceeds the budget is split further: tables by rows (header repeated), prose by sentences with
~12% overlap, and, last, by token windows. Every chunk body is an exact slice of the source.

Headings never end a chunk: a heading (and any lead-in such as a clause title, an e-mail header or
a paragraph ending in ":") is packed with the first piece of what follows it, so a numbered clause
is never separated from its heading and a table never from the text that introduces it.
"""

import dataclasses
import hashlib
import re

from services.chunker.structure import Block, Section
from shared.embedding.tokens import TokenCounter, token_starts, token_windows, tokens_between
from shared.model import Chunk, DocumentMeta
from shared.text import heading_prefix, sentence_spans

# A bare clause number on its own line ("7.2", "(a)") belongs to the text after it.
_BARE_NUMBER = re.compile(r"^\s*\(?[0-9a-z]{1,3}(\.[0-9]+)*[.)]?\s*$", re.IGNORECASE)
_LEAD_IN_MAX_CHARS = 300


@dataclasses.dataclass
class _Unit:
    start: int
    end: int
    block_index: int
    split: bool  # produced by splitting an oversized block (only those get overlap)
    header: tuple[int, int] | None = None  # table header to repeat when the piece lacks it
    row_key: tuple[int, int] | None = None  # a long table row's first cell, repeated in its later windows


def stable_id(*parts: str, prefix: str = "ch_") -> str:
    return prefix + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


def is_lead_in(text: str, block: Block) -> bool:
    """Blocks that introduce what follows and must not end a chunk on their own."""
    if block.kind == "heading":
        return True
    body = text[block.start : block.end].rstrip()
    return (
        block.kind in ("paragraph", "list_item")
        and len(body) <= _LEAD_IN_MAX_CHARS
        and (body.endswith(":") or bool(_BARE_NUMBER.match(body)))
    )


# Below this many tokens left for rows, a split table's header is not repeated in its pieces.
MIN_ROW_TOKENS = 16
# A table row too long for one chunk (an article body in a spreadsheet cell) is cut into windows; its first cell,
# which usually names the row ("Reset a password"), rides in the embed text of the later windows when it is this
# short, so each window is still found as that row's.
MAX_ROW_KEY_TOKENS = 32


class SectionPacker:
    def __init__(self, counter: TokenCounter, max_tokens: int, overlap_ratio: float = 0.12):
        self.counter = counter
        self.max_tokens = max_tokens
        self.overlap_ratio = overlap_ratio

    def _embed_text(self, text: str, prefix: str, unit: _Unit, start: int, end: int) -> str:
        body = text[start:end]
        if unit.row_key and start >= unit.row_key[1]:
            body = text[unit.row_key[0] : unit.row_key[1]] + " … " + body
        if unit.header and start > unit.header[0]:
            body = text[unit.header[0] : unit.header[1]] + "\n" + body
        return f"{prefix}\n{body}" if prefix else body

    def _fits(self, text, prefix, first: _Unit, start: int, end: int) -> bool:
        embed_text = self._embed_text(text, prefix, first, start, end)
        # Every word is at least one token: a text with more words than the window cannot fit, and a 1 MB block
        # need not be tokenized to find that out.
        if len(embed_text) > 4 * self.max_tokens and len(embed_text.split()) > self.max_tokens:
            return False
        return self.counter.count(embed_text) <= self.max_tokens

    def _units(self, text: str, prefix: str, block: Block, index: int, lead: int | None) -> list[_Unit]:
        """The block as packable units; `lead` is where the headings/lead-ins it carries start."""
        start = block.start if lead is None else lead
        whole = _Unit(start, block.end, index, False)
        if self._fits(text, prefix, whole, start, block.end):
            return [whole]
        if block.kind == "table" and block.header_end:
            # The header row is repeated in the embed text of later pieces (the `| --- |` rule is
            # only noise to the embedder); a header that would crowd out the rows is not repeated.
            span = (block.start, text.index("\n", block.start, block.header_end))
            header_tokens = self.counter.count(text[span[0] : span[1]])
            header: tuple[int, int] | None = span
            # Rows need room too: beside the heading prefix, a repeated header must leave some.
            if (
                header_tokens > self.max_tokens // 2
                or self.counter.count(prefix) + header_tokens + MIN_ROW_TOKENS > self.max_tokens
            ):
                header = None
            rows = _line_spans(text, block.header_end + 1, block.end)
            # The header travels with the first row; later pieces get it prepended in the embed text.
            spans = [(start, rows[0][1]), *rows[1:]] if rows else [(start, block.end)]
            pieces = [_Unit(s, e, index, True, header) for s, e in spans]
        elif block.kind in ("code", "table"):
            pieces = [_Unit(s, e, index, True) for s, e in _line_spans(text, block.start, block.end)]
        else:
            pieces = [_Unit(s, e, index, True) for s, e in sentence_spans(text, block.start, block.end)]
        if not pieces:
            pieces = [_Unit(block.start, block.end, index, True)]
        pieces[0].start = start  # the lead rides with the first piece
        # Counted in one batch: one call per sentence cost more than the tokenizing itself.
        counts = self.counter.count_many([self._embed_text(text, prefix, p, p.start, p.end) for p in pieces])
        out = []
        for piece, tokens in zip(pieces, counts, strict=True):
            if tokens <= self.max_tokens:
                out.append(piece)
            else:
                out += self._windows(text, prefix, piece)
        return out

    def _windows(self, text: str, prefix: str, piece: _Unit) -> list[_Unit]:
        """Last resort: token windows. Re-tokenizing a cut-out span can cost a token or two more than
        the cut promised, so any window that still does not fit is cut again with a smaller budget."""
        header_tokens = self.counter.count(text[piece.header[0] : piece.header[1]]) if piece.header else 0
        row_key = self._row_key(text, piece, piece.header) if piece.header else None
        key_tokens = self.counter.count(text[row_key[0] : row_key[1]] + " … ") if row_key else 0
        if self.counter.count(prefix) + header_tokens + key_tokens + MIN_ROW_TOKENS > self.max_tokens:
            row_key, key_tokens = None, 0  # the row's text needs the room more than its name does
        budget = max(1, self.max_tokens - self.counter.count(prefix) - header_tokens - key_tokens - 4)
        out, todo = [], [(piece.start, piece.end, budget)]
        while todo:
            start, end, budget = todo.pop(0)
            unit = _Unit(start, end, piece.block_index, True, piece.header, row_key)
            if self._fits(text, prefix, unit, start, end) or budget <= 1:
                out.append(unit)
                continue
            spans = token_windows(self.counter, text, start, end, budget)
            if len(spans) == 1:
                # Already one window and still too long: shrink the budget until it splits.
                todo.insert(0, (start, end, budget // 2))
            else:
                todo[:0] = [(s, e, budget) for s, e in spans]
        return out

    def _row_key(self, text: str, piece: _Unit, header: tuple[int, int]) -> tuple[int, int] | None:
        """The span of a table row's first cell, bars included ("| Reset a password |"), when it is short. The
        first piece of a split table holds the header and the first row; every later piece is one row."""
        row = text.rfind("\n", 0, piece.end - 1) + 1 if piece.start <= header[0] else piece.start
        if not text.startswith("|", row):
            return None
        bar = row + 1
        while (bar := text.find("|", bar, piece.end)) > 0 and text[bar - 1] == "\\":  # an escaped pipe is text
            bar += 1
        if bar < 0 or not text[row + 1 : bar].strip():
            return None
        if self.counter.count(text[row : bar + 1]) > MAX_ROW_KEY_TOKENS:
            return None
        return (row, bar + 1)

    def pack(self, text: str, prefix: str, section: Section, lead_start: int | None) -> list[tuple[int, int, str]]:
        """(start, end, embed_text) for each chunk of the section. `lead_start` pulls in headings of
        content-less parent sections so their text is not dropped."""
        units: list[_Unit] = []
        lead = lead_start
        last = len(section.blocks) - 1
        for i, block in enumerate(section.blocks):
            if i < last and is_lead_in(text, block):
                lead = block.start if lead is None else lead
                continue
            units += self._units(text, prefix, block, i, lead)
            lead = None
        pieces: list[list[_Unit]] = []
        current: list[_Unit] = []
        starts = token_starts(self.counter, text, units[0].start, units[-1].end) if len(units) > 2 else None
        i = 0
        while i < len(units):
            if current:
                # Greedy: the piece takes every following unit that still fits behind its first one.
                fitting = self._fitting(text, prefix, current, units, i, starts)
                current += units[i:fitting]
                if fitting == len(units):
                    break
                pieces.append(current)
                i = fitting
            current = self._overlap(text, prefix, current, units[i]) + [units[i]]
            i += 1
        if current:
            pieces.append(current)
        return [(p[0].start, p[-1].end, self._embed_text(text, prefix, p[0], p[0].start, p[-1].end)) for p in pieces]

    def _fitting(
        self, text: str, prefix: str, current: list[_Unit], units: list[_Unit], i: int, starts: list[int] | None
    ) -> int:
        """The index of the first unit from `i` on that no longer fits in the piece `current` begins (len(units)
        when all do). Counting the growing piece again for each unit made a 5 MB text take 30 s, so the tokens a
        unit adds are read from one tokenization of the section (`starts`), and only the two counts that decide the
        cut are made exactly; where they disagree with that reading (a tokenizer that reads a boundary otherwise),
        the units are tried one at a time, exactly, as before."""
        first = current[0]

        def fits(j: int) -> bool:
            return self._fits(text, prefix, first, first.start, units[j].end)

        if starts is not None:
            # The piece's prefix, repeated header and special tokens, then its body's tokens as the section reads.
            around = self.counter.count(self._embed_text(text, prefix, first, first.start, first.start))
            k = i
            while k < len(units) and around + tokens_between(starts, first.start, units[k].end) <= self.max_tokens:
                k += 1
            if (k == i or fits(k - 1)) and (k == len(units) or not fits(k)):
                return k
        k = i
        while k < len(units) and fits(k):
            k += 1
        return k

    def _overlap(self, text, prefix, previous: list[_Unit], unit: _Unit) -> list[_Unit]:
        """Trailing units of the previous piece to repeat, only inside a block we had to split.

        Overlap can never stall packing: carried units come from previous[1:], so the next piece
        starts strictly after the previous one did, and they are only carried while the new unit
        still fits behind them, so every piece ends further than the last."""
        if not unit.split or not previous or previous[-1].block_index != unit.block_index:
            return []
        budget = int(self.max_tokens * self.overlap_ratio)
        carried: list[_Unit] = []
        for prev in reversed(previous[1:] if len(previous) > 1 else []):
            if prev.block_index != unit.block_index:
                break
            candidate = [prev, *carried]
            if self.counter.count(text[candidate[0].start : candidate[-1].end]) > budget:
                break
            if not self._fits(text, prefix, candidate[0], candidate[0].start, unit.end):
                break
            carried = candidate
        return carried


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, pos = [], start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        if text[pos:stop].strip():
            spans.append((pos, stop))
        pos = stop + 1
    return spans


# Parent context per chunk ("retrieve small, pass large"): a section up to this size rides whole with
# each of its chunks, a longer one as a window around the chunk (above the generator's default section
# budget of 300 tokens either way). Bounded so a 10 MB document's chunks fit a 64 MiB response.
SECTION_CONTEXT_FACTOR = 3
MIN_SECTION_CHARS = 4_000
MAX_SECTION_CHARS = 16_000


def bounded_prefix(counter: TokenCounter, prefix: str, max_tokens: int) -> str:
    """The heading path costs tokens in every chunk; a pathological one (hundreds of tokens) is cut
    to half the window so the body always has room. Only the prefix is cut, never the body."""
    limit = max_tokens // 2
    if not prefix or counter.count(prefix) <= limit:
        return prefix
    spans = token_windows(counter, prefix, 0, len(prefix), max(1, limit - 2))
    return prefix[: spans[0][1]].rstrip()


def section_window(text: str, section_start: int, section_end: int, start: int, end: int) -> str:
    """The chunk's enclosing section, or when that is longer than the chunk's context allowance
    (SECTION_CONTEXT_FACTOR times the chunk, at least MIN_SECTION_CHARS, at most MAX_SECTION_CHARS) a
    window of that size centred on the chunk, always holding all of it. Every chunk carries this text:
    uncapped, a heading-less document's chunks grow with the square of its size (a 1 MB text made a
    381 MB response); capped, they stay within a few times the document."""
    width = min(MAX_SECTION_CHARS, max(MIN_SECTION_CHARS, SECTION_CONTEXT_FACTOR * (end - start)))
    width = max(width, end - start)
    if section_end - section_start <= width:
        return text[section_start:section_end]
    begin = max(section_start, min(start - (width - (end - start)) // 2, section_end - width))
    return text[begin : begin + width]


def build_chunks(text: str, meta: DocumentMeta, sections: list[Section], packer: SectionPacker) -> list[Chunk]:
    chunks: list[Chunk] = []
    lead_start: int | None = None
    for s_index, section in enumerate(sections):
        if not section.has_content and s_index < len(sections) - 1:
            # Headings with no text of their own ride with the next section's first chunk.
            lead_start = section.start if lead_start is None else lead_start
            continue
        prefix = bounded_prefix(packer.counter, heading_prefix(meta.title, section.heading_path), packer.max_tokens)
        section_id = stable_id(
            meta.tenant_id, meta.document_id, meta.version, str(s_index), *section.heading_path, prefix="sec_"
        )
        section_start = section.start if lead_start is None else lead_start
        for start, end, embed_text in packer.pack(text, prefix, section, lead_start):
            position = len(chunks)
            chunks.append(
                Chunk(
                    chunk_id=stable_id(meta.tenant_id, meta.document_id, meta.version, str(position), embed_text),
                    meta=meta,
                    heading_path=list(section.heading_path),
                    body=text[start:end],
                    embed_text=embed_text,
                    char_start=start,
                    char_end=end,
                    parent_section_id=section_id,
                    token_count=packer.counter.count(embed_text),
                    position=position,
                    section_text=section_window(text, section_start, section.end, start, end),
                )
            )
        lead_start = None
    return chunks
