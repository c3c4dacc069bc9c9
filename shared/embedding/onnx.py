"""An ONNX export of a BERT-style bi-encoder as an embedder: onnxruntime + the `tokenizers` library.

The folder holds one `*.onnx` (preferably `model.onnx`) and a `tokenizer.json`; pooling, normalisation
and the query/passage prefixes are not in those files, so they come from an `OnnxSpec`.
"""

import dataclasses
import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from shared.embedding.base import ModelSpec

log = logging.getLogger("ragmesh.embedding")

POOLINGS = ("cls", "mean")


@dataclasses.dataclass(frozen=True)
class OnnxSpec:
    """What an ONNX model needs besides its weights and tokenizer."""

    model_id: str
    version: str
    dimension: int
    max_tokens: int
    pooling: str = "mean"  # "cls" (bge) or "mean" (e5, MiniLM)
    normalize: bool = True
    query_prefix: str = ""
    passage_prefix: str = ""
    query_variant: str = ""  # see ModelSpec.query_variant

    def __post_init__(self):
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling {self.pooling!r} is not one of {POOLINGS}")

    def model_spec(self) -> ModelSpec:
        return ModelSpec(
            self.model_id,
            self.dimension,
            self.max_tokens,
            self.query_prefix,
            self.passage_prefix,
            version=self.version,
            query_variant=self.query_variant,
        )


def find_onnx_file(folder: str | os.PathLike) -> Path | None:
    """`model.onnx` when present, else the only (or first, sorted) `*.onnx` in the folder."""
    folder = Path(folder)
    preferred = folder / "model.onnx"
    if preferred.is_file():
        return preferred
    candidates = sorted(folder.glob("*.onnx")) + sorted(folder.glob("onnx/*.onnx"))
    return candidates[0] if candidates else None


class OnnxEmbedder:
    """Encodes with onnxruntime on the CPU, in batches of similar length so padding costs little.

    `threads` bounds onnxruntime's intra-op pool (and spinning is off), so encoding does not fight
    numpy and the gRPC threads over two cores."""

    def __init__(
        self,
        spec: OnnxSpec,
        folder: str | os.PathLike,
        threads: int = 2,
        batch_size: int = 32,
        max_batch_tokens: int = 8192,
    ):
        self.onnx_spec = spec
        self.folder = Path(folder)
        self.threads = max(1, int(threads))
        self.batch_size = batch_size
        self.max_batch_tokens = max_batch_tokens
        self.spec: ModelSpec = spec.model_spec()
        # Set by warm_up(): an onnxruntime session and a tokenizers.Tokenizer.
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()

    @property
    def model_name(self) -> str:
        return self.spec.model_id

    def warm_up(self) -> None:
        if self._session is not None:
            return
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model_path = find_onnx_file(self.folder)
        tokenizer_path = self.folder / "tokenizer.json"
        if model_path is None or not tokenizer_path.is_file():
            raise FileNotFoundError(
                f"{self.spec.model_id}: {self.folder} needs a *.onnx and a tokenizer.json (run `make models`)"
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle workers must not spin on a shared two-core machine.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._input_names = {i.name for i in self._session.get_inputs()}
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        tokenizer.enable_truncation(max_length=self.spec.max_tokens)
        tokenizer.no_padding()  # padded per batch, to the batch's longest
        self._tokenizer = tokenizer
        log.info(
            "model %s (%s): %s, %d intra-op threads", self.spec.model_id, self.spec.version, model_path, self.threads
        )
        probe = self._encode(["warm up"])
        if probe.shape[1] != self.spec.dimension:
            raise RuntimeError(
                f"{self.spec.model_id}: the model gives {probe.shape[1]}-d vectors, its spec says {self.spec.dimension}"
            )

    # -- encoding ---------------------------------------------------------------------------------

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        return [e.ids for e in self._tokenizer.encode_batch(texts)]

    def batches(self, ids: list[list[int]]) -> list[list[int]]:
        """Indices of `ids` grouped longest-first into batches of similar length, bounded by count and
        by padded tokens (batch rows x longest row)."""
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]), reverse=True)
        groups: list[list[int]] = []
        current: list[int] = []
        for i in order:
            longest = len(ids[current[0]]) if current else len(ids[i])
            if current and (len(current) >= self.batch_size or (len(current) + 1) * longest > self.max_batch_tokens):
                groups.append(current)
                current = []
            current.append(i)
        if current:
            groups.append(current)
        return groups

    def feeds(self, rows: list[list[int]]) -> dict[str, np.ndarray]:
        width = max(len(r) for r in rows)
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for j, row in enumerate(rows):
            input_ids[j, : len(row)] = row
            mask[j, : len(row)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        return feeds

    def run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        return self._session.run(None, {k: v for k, v in feeds.items() if k in self._input_names})[0]

    def pool(self, hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if hidden.ndim == 2:  # an export that already pools
            vectors = hidden
        elif self.onnx_spec.pooling == "cls":
            vectors = hidden[:, 0]
        else:
            weights = mask[:, :, None].astype(hidden.dtype)
            vectors = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        vectors = vectors.astype(np.float32, copy=False)
        if self.onnx_spec.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors

    def _encode(self, texts: list[str]) -> np.ndarray:
        if self._session is None:
            raise RuntimeError("warm_up() must run before encoding")
        out = np.zeros((len(texts), self.spec.dimension), dtype=np.float32)
        if not texts:
            return out
        ids = self.tokenize(texts)
        for group in self.batches(ids):
            feeds = self.feeds([ids[i] for i in group])
            out[group] = self.pool(self.run(feeds), feeds["attention_mask"])
        return out

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        return self._encode([self.spec.passage_prefix + t for t in texts])

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode([self.spec.query_prefix + t for t in texts])
