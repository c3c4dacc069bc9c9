"""Token counting with the embedding model's own tokenizer (no torch needed)."""

import bisect
import os

from tokenizers import Tokenizer

from shared.embedding.registry import DEFAULT_WINDOW, model_window, passage_prefix, tokenizer_source


class TokenCounter:
    """Counts tokens as the embedder will see them, special tokens included."""

    def __init__(self, model_name: str):
        self.model_name = model_name
        self._tokenizer: Tokenizer | None = None
        self.max_tokens = 0

    def warm_up(self) -> None:
        # The same tokenizer files and window as the embedder (shared.embedding.registry).
        folder, window = tokenizer_source(self.model_name)
        if os.path.isdir(folder):
            self._tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
            self.max_tokens = window or model_window(folder) or DEFAULT_WINDOW
        else:
            self._tokenizer = Tokenizer.from_pretrained(folder)
            self.max_tokens = window or DEFAULT_WINDOW
        # Count everything: truncation here would hide exactly the overflow we must detect.
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        # The embedder prepends a passage prefix (e5's "passage: "): those tokens come out of the window.
        prefix = passage_prefix(self.model_name)
        if prefix:
            self.max_tokens -= len(self._tokenizer.encode(prefix, add_special_tokens=False).ids)

    @property
    def tokenizer(self) -> Tokenizer:
        if self._tokenizer is None:
            raise RuntimeError(f"token counter for {self.model_name}: call warm_up() first")
        return self._tokenizer

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text).ids)

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts)]


def token_windows(counter: TokenCounter, text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Cut text[start:end] into spans of at most `budget` tokens at token boundaries (last resort
    for a sentence longer than the window). Spans are contiguous, so no character is lost."""
    encoding = counter.tokenizer.encode(text[start:end], add_special_tokens=False)
    offsets = encoding.offsets
    spans, piece_start = [], 0
    for i in range(budget, len(offsets), budget):
        cut = offsets[i][0]
        if cut > piece_start:
            spans.append((start + piece_start, start + cut))
            piece_start = cut
    spans.append((start + piece_start, end))
    return spans


def token_starts(counter: TokenCounter, text: str, start: int, end: int) -> list[int]:
    """Where each token of text[start:end] begins in `text`, in order: read once, it tells how many tokens any
    span of it holds (tokens_between) without tokenizing that span again."""
    encoding = counter.tokenizer.encode(text[start:end], add_special_tokens=False)
    return [start + token_start for token_start, _ in encoding.offsets]


def tokens_between(starts: list[int], start: int, end: int) -> int:
    """How many of the tokens `starts` locates begin in text[start:end]."""
    return bisect.bisect_left(starts, end) - bisect.bisect_left(starts, start)
