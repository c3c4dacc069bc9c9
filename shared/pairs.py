"""(question, passage) pairs as a BERT-style cross-encoder reads them: the reranker's model and the generator's
support reader share one tokenising, so a model scores the same pairs wherever it runs (Triton's model.py, which
runs in Triton's own environment, keeps its copy)."""

from pathlib import Path

import numpy as np


def pair_tokenizer(path: Path, max_length: int):
    """A trained model's tokenizer set up for (query, passage) pairs: the longer side is cut first, batches padded."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.enable_truncation(max_length, strategy="longest_first")
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def pair_feeds(tokenizer, query: str, passages: list[str], input_names: set[str] | None = None) -> dict:
    """The tokenised pairs as a BERT-style cross-encoder takes them (int64 arrays), limited to `input_names`."""
    encoded = tokenizer.encode_batch([(query, p) for p in passages])
    columns = {
        "input_ids": [e.ids for e in encoded],
        "attention_mask": [e.attention_mask for e in encoded],
        "token_type_ids": [e.type_ids for e in encoded],
    }
    return {k: np.array(v, dtype=np.int64) for k, v in columns.items() if input_names is None or k in input_names}
