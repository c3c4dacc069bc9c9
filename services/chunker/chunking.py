"""Structure-first chunking: pack a section's blocks into chunks that fit the embedder's window.

Documents are split on their own boundaries (sections, then blocks). Only a block that alone
exceeds the budget is split further: tables by rows (header repeated), prose by sentences with
~12% overlap, and, last, by token windows. Every chunk body is an exact slice of the source.
"""

import dataclasses
import hashlib

from services.chunker.structure import Block, Section
from shared.embedding.tokens import TokenCounter, token_windows
from shared.model import Chunk, DocumentMeta
from shared.text import heading_prefix, sentence_spans


@dataclasses.dataclass
class _Unit:
    start: int
    end: int
    block_index: int
    split: bool  # produced by splitting an oversized block (only those get overlap)
    header: tuple[int, int] | None = None  # table header to repeat when the piece lacks it


def stable_id(*parts: str, prefix: str = "ch_") -> str:
    return prefix + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:24]


class SectionPacker:
    def __init__(self, counter: TokenCounter, max_tokens: int, overlap_ratio: float = 0.12):
        self.counter = counter
        self.max_tokens = max_tokens
        self.overlap_ratio = overlap_ratio

    def _embed_text(self, text: str, prefix: str, unit: _Unit, start: int, end: int) -> str:
        body = text[start:end]
        if unit.header and start > unit.header[0]:
            body = text[unit.header[0]:unit.header[1]] + "\n" + body
        return f"{prefix}\n{body}" if prefix else body

    def _fits(self, text, prefix, first: _Unit, start: int, end: int) -> bool:
        return self.counter.count(self._embed_text(text, prefix, first, start, end)) <= self.max_tokens

    def _units(self, text: str, prefix: str, block: Block, index: int) -> list[_Unit]:
        whole = _Unit(block.start, block.end, index, False)
        if self._fits(text, prefix, whole, block.start, block.end):
            return [whole]
        if block.kind == "table":
            header = (block.start, block.header_end)
            rows = _line_spans(text, block.header_end + 1, block.end)
            # The header travels with the first row; later pieces get it prepended in the embed text.
            spans = [(block.start, rows[0][1]), *rows[1:]] if rows else [(block.start, block.end)]
            pieces = [_Unit(s, e, index, True, header) for s, e in spans]
        elif block.kind == "code":
            pieces = [_Unit(s, e, index, True) for s, e in _line_spans(text, block.start, block.end)]
        else:
            pieces = [_Unit(s, e, index, True) for s, e in sentence_spans(text, block.start, block.end)]
        out = []
        for piece in pieces:
            if self._fits(text, prefix, piece, piece.start, piece.end):
                out.append(piece)
                continue
            header_tokens = self.counter.count(text[piece.header[0]:piece.header[1]]) if piece.header else 0
            budget = max(8, self.max_tokens - self.counter.count(prefix) - header_tokens - 8)
            out += [_Unit(s, e, index, True, piece.header)
                    for s, e in token_windows(self.counter, text, piece.start, piece.end, budget)]
        return out

    def pack(self, text: str, prefix: str, section: Section, lead_start: int | None) -> list[tuple[int, int, str]]:
        """(start, end, embed_text) for each chunk of the section. `lead_start` pulls in headings of
        content-less parent sections so their text is not dropped."""
        units: list[_Unit] = []
        for i, block in enumerate(section.blocks):
            units += self._units(text, prefix, block, i)
        if lead_start is not None and units:
            # Headings of content-less parent sections ride along as their own unit.
            units.insert(0, _Unit(lead_start, section.blocks[0].start, -1, False))
        pieces: list[list[_Unit]] = []
        current: list[_Unit] = []
        for unit in units:
            if current and self._fits(text, prefix, current[0], current[0].start, unit.end):
                current.append(unit)
                continue
            if current:
                pieces.append(current)
            current = self._overlap(text, prefix, current, unit) + [unit]
        if current:
            pieces.append(current)
        return [(p[0].start, p[-1].end, self._embed_text(text, prefix, p[0], p[0].start, p[-1].end))
                for p in pieces]

    def _overlap(self, text, prefix, previous: list[_Unit], unit: _Unit) -> list[_Unit]:
        """Trailing units of the previous piece to repeat, only inside a block we had to split.
        Bounded by the overlap budget and always leaving room for the new unit, so packing
        always advances."""
        if not unit.split or not previous or previous[-1].block_index != unit.block_index:
            return []
        budget = int(self.max_tokens * self.overlap_ratio)
        carried: list[_Unit] = []
        for prev in reversed(previous[1:] if len(previous) > 1 else []):
            if prev.block_index != unit.block_index:
                break
            candidate = [prev, *carried]
            if self.counter.count(text[candidate[0].start:candidate[-1].end]) > budget:
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


def build_chunks(text: str, meta: DocumentMeta, sections: list[Section], packer: SectionPacker) -> list[Chunk]:
    chunks: list[Chunk] = []
    lead_start: int | None = None
    for s_index, section in enumerate(sections):
        if not section.has_content:
            lead_start = section.start if lead_start is None else lead_start
            continue
        prefix = heading_prefix(meta.title, section.heading_path)
        section_id = stable_id(meta.tenant_id, meta.document_id, meta.version, str(s_index),
                               *section.heading_path, prefix="sec_")
        section_start = section.start if lead_start is None else lead_start
        for start, end, embed_text in packer.pack(text, prefix, section, lead_start):
            position = len(chunks)
            chunks.append(Chunk(
                chunk_id=stable_id(meta.tenant_id, meta.document_id, meta.version, str(position), embed_text),
                meta=meta, heading_path=list(section.heading_path), body=text[start:end],
                embed_text=embed_text, char_start=start, char_end=end, parent_section_id=section_id,
                token_count=packer.counter.count(embed_text), position=position,
                section_text=text[section_start:section.end],
            ))
        lead_start = None
    if lead_start is not None and chunks:
        # Trailing headings with no content: extend the last chunk rather than drop them.
        last = chunks[-1]
        end = max(sec.end for sec in sections)
        last.body = text[last.char_start:end]
        last.char_end = end
    elif lead_start is not None:
        end = max(sec.end for sec in sections)
        prefix = heading_prefix(meta.title, [])
        body = text[lead_start:end]
        embed_text = f"{prefix}\n{body}" if prefix else body
        chunks.append(Chunk(
            chunk_id=stable_id(meta.tenant_id, meta.document_id, meta.version, "0", embed_text), meta=meta,
            heading_path=[], body=body, embed_text=embed_text, char_start=lead_start, char_end=end,
            parent_section_id=stable_id(meta.tenant_id, meta.document_id, meta.version, prefix="sec_"),
            token_count=packer.counter.count(embed_text), position=0, section_text=body,
        ))
    return chunks
