"""Token counting with the embedding model's own tokenizer (no torch needed)."""

import json
import os

from tokenizers import Tokenizer

from shared.embedding.registry import passage_prefix, tokenizer_source


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
            self.max_tokens = window or _window(folder)
        else:
            self._tokenizer = Tokenizer.from_pretrained(folder)
            self.max_tokens = window or 512
        # Count everything: truncation here would hide exactly the overflow we must detect.
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        # The embedder prepends a passage prefix (e5's "passage: "): those tokens come out of the window.
        prefix = passage_prefix(self.model_name)
        if prefix:
            self.max_tokens -= len(self._tokenizer.encode(prefix, add_special_tokens=False).ids)

    def count(self, text: str) -> int:
        return len(self._tokenizer.encode(text).ids)

    def count_many(self, texts: list[str]) -> list[int]:
        return [len(e.ids) for e in self._tokenizer.encode_batch(texts)]


def _window(folder: str) -> int:
    """The model's input window: sentence-transformers' max_seq_length, else the tokenizer's."""
    for name, key in (("sentence_bert_config.json", "max_seq_length"), ("tokenizer_config.json", "model_max_length")):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            with open(path) as fh:
                value = json.load(fh).get(key)
            if isinstance(value, int) and value < 100_000:
                return value
    return 512


def token_windows(counter: TokenCounter, text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    """Cut text[start:end] into spans of at most `budget` tokens at token boundaries (last resort
    for a sentence longer than the window). Spans are contiguous, so no character is lost."""
    encoding = counter._tokenizer.encode(text[start:end], add_special_tokens=False)
    offsets = encoding.offsets
    spans, piece_start = [], 0
    for i in range(budget, len(offsets), budget):
        cut = offsets[i][0]
        if cut > piece_start:
            spans.append((start + piece_start, start + cut))
            piece_start = cut
    spans.append((start + piece_start, end))
    return spans
