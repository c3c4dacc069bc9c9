"""The support reader: a cross-encoder that reads (question, answer unit under its heading) and says how
likely the unit supports an answer to the question.

The maxsim similarity and the coverage features see words; near-miss unanswerable questions ("can Indian
customers pay by UPI" over a payment-terms sentence) share them with answerable ones. A cross-encoder reads
the question and the unit together. It is fine-tuned here from the project's sample cross-encoder on the
labelled train split's units (`ragmesh train-support`, services/generator/support_training.py), exported to
ONNX (int8) and run in-process with onnxruntime; the folder holds model.onnx, tokenizer.json and a card
(ragmesh-support.json: model id, version = hash of the training data and settings, max length).
"""

import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from shared import config
from shared.model import ScoredChunk
from shared.pairs import pair_feeds, pair_tokenizer
from shared.text import heading_prefix, read_row

log = logging.getLogger("ragmesh.generator")
CARD_FILE = "ragmesh-support.json"
DEFAULT_NAME = "sample"


def cache_root() -> Path:
    return Path(config.expand(config.GeneratorConfig.from_env().support_cache))


def unit_text(passage: ScoredChunk, start: int, end: int, header: str = "") -> str:
    """What the reader reads for one unit: its heading path, then the unit as one line; a table row is read
    with its header, cell by cell ("Plan: Team; Monthly price: $79"; shared.text.read_row)."""
    chunk = passage.chunk
    text = chunk.body[start:end].strip()
    if text.startswith("|") and header:
        text = read_row(header, text)
    context = heading_prefix(chunk.meta.title, list(chunk.heading_path))
    text = " ".join(text.split())
    return f"{context}: {text}" if context else text


def resolve(name: str) -> Path | None:
    """A reader folder: an explicit path holding a card, or a model of that name in the cache."""
    for folder in (Path(name), cache_root() / name):
        if (folder / CARD_FILE).is_file():
            return folder
    return None


class SupportReader:
    """The exported reader on onnxruntime (CPU): one batch for all units of a question."""

    def __init__(self, model_dir: Path | str, threads: int = 2):
        self.model_dir, self.threads = Path(model_dir), threads
        card = json.loads((self.model_dir / CARD_FILE).read_text())
        self.card = card
        self.model_id = f"{card['model_id']}@{card['model_version']}"
        self.max_length = int(card["max_length"])
        self.onnx_file = card.get("onnx_file", "model.onnx")
        self._session: Any = None  # onnxruntime.InferenceSession, made by warm_up()
        self._tokenizer: Any = None  # tokenizers.Tokenizer
        self._input_names: set[str] = set()

    def warm_up(self) -> None:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = self.threads, 1
        self._session = ort.InferenceSession(
            str(self.model_dir / self.onnx_file), options, providers=["CPUExecutionProvider"]
        )
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._tokenizer = pair_tokenizer(self.model_dir / "tokenizer.json", self.max_length)
        log.info("support reader %s from %s", self.model_id, self.model_dir)

    def score(self, question: str, texts: list[str]) -> np.ndarray:
        """P(unit supports an answer) for each text, in order."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        if self._session is None:
            raise RuntimeError(f"{self.model_dir}: the support reader is not loaded (warm_up() first)")
        feeds = pair_feeds(self._tokenizer, question, texts, self._input_names)
        logits = self._session.run(None, feeds)[0][:, 0].astype(np.float64)
        return (1.0 / (1.0 + np.exp(-logits))).astype(np.float32)
