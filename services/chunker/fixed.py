"""The fixed-window baseline: token windows over the document body, blind to its structure.

This is what the evaluation compares structure-aware chunking against: the common default of
cutting every document into N-token windows with some overlap, no headings, no table or section
boundaries. The common default is N = 512, but the embedder (all-MiniLM-L6-v2) reads 256 tokens and
silently drops the rest, so 512-token windows would hide half of every chunk from dense retrieval
and the reranker while BM25 and the generator still see it: the comparison would then measure
truncation, not structure. The window is therefore 512 capped at the model's window (256 here),
the same budget the structure chunker gets, so the two differ only in where they cut.

Cuts fall on word starts (a window never splits a word unless one word is longer than a window),
consecutive windows overlap by `overlap_ratio` of the window, and the next window always starts at
least one token after the previous one, so a cut that snaps back to a word start cannot stall.
"""

from services.chunker.chunking import stable_id
from shared.embedding.tokens import TokenCounter
from shared.model import Chunk, DocumentMeta

COMMON_DEFAULT_TOKENS = 512
SPECIAL_TOKENS = 2  # [CLS] and [SEP], counted in every embedded text


class FixedWindows:
    def __init__(self, counter: TokenCounter, window: int, overlap_ratio: float = 0.12):
        self.counter = counter
        self.window = window
        self.overlap = max(0, int(window * overlap_ratio))

    def spans(self, text: str, start: int = 0) -> list[tuple[int, int]]:
        """(start, end) of each window over text[start:]; together they cover every non-whitespace
        character, and each window counts at most `window` tokens."""
        encoding = self.counter.tokenizer.encode(text[start:], add_special_tokens=False)
        offsets = [(start + a, start + b) for a, b in encoding.offsets]
        words = encoding.word_ids
        n = len(offsets)
        budget = max(1, self.window - SPECIAL_TOKENS)

        def word_start(i: int, floor: int) -> int:
            # Back up to the first token of the word at i, but never to `floor` or before it.
            while i > floor + 1 and words[i] is not None and words[i] == words[i - 1]:
                i -= 1
            return i

        spans: list[tuple[int, int]] = []
        i, previous_end = 0, start
        while i < n:
            j = min(i + budget, n)
            if j < n:
                j = word_start(j, i)
            span_start = min(offsets[i][0], previous_end)  # no gap: dropped characters stay covered
            span_end = offsets[j - 1][1] if j < n else len(text.rstrip())
            while j - i > 1 and self.counter.count(text[span_start:span_end]) > self.window:
                j -= max(1, (j - i) // 16)  # re-tokenizing a cut-out span may cost a token more
                span_end = offsets[j - 1][1]
            span_start += len(text[span_start:span_end]) - len(text[span_start:span_end].lstrip())
            if text[span_start:span_end].strip():
                spans.append((span_start, span_end))
            if j >= n:
                break
            previous_end = span_end
            i = max(word_start(max(j - self.overlap, i + 1), i), i + 1)
        return spans

    def chunks(self, text: str, meta: DocumentMeta, start: int) -> list[Chunk]:
        section_id = stable_id(meta.tenant_id, meta.document_id, meta.version, prefix="sec_")
        out = []
        for position, (s, e) in enumerate(self.spans(text, start)):
            body = text[s:e]
            out.append(
                Chunk(
                    chunk_id=stable_id(meta.tenant_id, meta.document_id, meta.version, str(position), body),
                    meta=meta,
                    heading_path=[],
                    body=body,
                    embed_text=body,
                    char_start=s,
                    char_end=e,
                    parent_section_id=section_id,
                    token_count=self.counter.count(body),
                    position=position,
                    section_text=body,
                )
            )
        return out
