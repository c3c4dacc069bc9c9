"""Cross-encoder reranking: a scorer reads (query, passage) pairs; the reranker fuses its ranks with the
first stage's using the weight the model was tuned with (services/reranker/fusion.py).

Scorers:
- `TritonScorer`: the model served by Triton (python backend, deploy/triton/), over gRPC with a deadline.
  The model's id, version and fusion weight come from the served config, so the reranker reports
  exactly what Triton runs. Unreachable -> `Unavailable`, and the gateway answers from the fused order.
- `OnnxScorer`: the same model files in-process on ONNX Runtime (CPU), for the embedded default.
- `HubScorer`: a sentence-transformers CrossEncoder by hub name (e.g. an MS MARCO MiniLM) for users
  with internet; trusted with weight 1.0 since no tuning split says otherwise.
"""

import json
import logging
import math
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from services.reranker import fusion
from shared.errors import InvalidArgument, Unavailable
from shared.model import ScoredChunk
from shared.pairs import pair_feeds, pair_tokenizer

log = logging.getLogger("ragmesh.reranker")
CARD_FILE = "ragmesh-reranker.json"
FP32_FILE = "model.onnx"
# ONNX Runtime's GraphOptimizationLevel members by short name (onnxruntime is imported where it runs).
GRAPH_LEVELS = {"basic": "ORT_ENABLE_BASIC", "extended": "ORT_ENABLE_EXTENDED", "all": "ORT_ENABLE_ALL"}


def served_weights(card: dict) -> dict:
    """The fusion weights a model card puts in force: a model without a tuning gain is not enabled, so
    its weights are 0 and the fused order stands."""
    enabled = card["fusion"] if card.get("enabled") else {}
    return {"weight": float(enabled.get("weight", 0.0)), "maxsim_weight": float(enabled.get("maxsim_weight", 0.0))}


def rerank_text(chunk) -> str:
    """What the cross-encoder reads (a model or protobuf Chunk): the text BM25 and the embedder saw
    (title, heading path, body)."""
    return chunk.embed_text or chunk.body


class TritonScorer:
    def __init__(self, address: str, model_name: str = "cross_encoder", timeout_s: float = 10.0):
        self.address, self.model_name, self.timeout_s = address, model_name, timeout_s
        self.model_id, self.model_version, self.weight, self.k = "", "", 0.0, fusion.RRF_K
        self.maxsim_weight = 0.0
        self._client: Any = None  # a tritonclient.grpc.InferenceServerClient, made by warm_up()

    def warm_up(self) -> None:
        import tritonclient.grpc as triton

        self._client = triton.InferenceServerClient(self.address)
        try:
            config = self._client.get_model_config(self.model_name, as_json=True, client_timeout=self.timeout_s)
        except Exception as exc:  # the model is served by another process that may not be up yet
            log.warning("Triton at %s: %s; will retry on the first request", self.address, exc)
            return
        params = {k: v.get("string_value", "") for k, v in config["config"].get("parameters", {}).items()}
        self.model_id = params.get("ragmesh_model_id", f"triton/{self.model_name}")
        self.model_version = params.get("ragmesh_model_version", "")
        self.weight = float(params.get("ragmesh_fusion_weight", "0") or 0)
        self.maxsim_weight = float(params.get("ragmesh_maxsim_weight", "0") or 0)
        self.k = int(params.get("ragmesh_fusion_k", str(fusion.RRF_K)))
        log.info(
            "cross-encoder %s version %s served by Triton at %s (fusion weight %s)",
            self.model_id,
            self.model_version,
            self.address,
            self.weight,
        )

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        import tritonclient.grpc as triton

        if not self.model_id:
            self.warm_up()
            if not self.model_id:
                raise Unavailable(f"Triton at {self.address} does not serve model {self.model_name!r}")
        n = len(passages)
        queries = np.array([[query.encode()]] * n, dtype=object)
        texts = np.array([[p.encode()] for p in passages], dtype=object)
        inputs = [triton.InferInput("QUERY", [n, 1], "BYTES"), triton.InferInput("PASSAGE", [n, 1], "BYTES")]
        inputs[0].set_data_from_numpy(queries)
        inputs[1].set_data_from_numpy(texts)
        try:
            result = self._client.infer(
                self.model_name, inputs, outputs=[triton.InferRequestedOutput("SCORE")], client_timeout=self.timeout_s
            )
        except Exception as exc:
            raise Unavailable(f"Triton at {self.address} (model {self.model_name}) failed: {exc}") from exc
        return result.as_numpy("SCORE").reshape(-1).astype(np.float32)


def serving_variant(card: dict, variant: str = "card") -> dict:
    """{"variant", "file", "max_length", "candidates"} that a CPU runs: with `variant="card"`, what the card's
    `serving` block chose on its dev split (e.g. int8 weights, a shorter window, fewer candidates); with `fp32`,
    the full exported model at its trained window; any other name, that variant's file (model.<name>.onnx) at
    the trained window. candidates 0: as many as the service's setting (RAGMESH_RERANKER_CROSS_ENCODER_K)."""
    full = {"variant": "fp32", "file": FP32_FILE, "max_length": int(card.get("max_length", 128)), "candidates": 0}
    if variant == "card":
        chosen = card.get("serving") or {}
        return {k: chosen.get(k, v) for k, v in full.items()}
    if variant == "fp32":
        return full
    return {**full, "variant": variant, "file": f"model.{variant}.onnx"}


def served_version(card: dict, serving: dict) -> str:
    """The model version a reranker reports: the card's, marked with the variant when it is not the fp32
    model at its trained window (an int8 model ranks a little differently from the one it came from)."""
    if serving["variant"] == "fp32" and int(serving["max_length"]) == int(card.get("max_length", 128)):
        return str(card["model_version"])
    return f"{card['model_version']}+{serving['variant']}@{serving['max_length']}"


class OnnxScorer:
    """The files `ragmesh train-reranker` writes, run in-process (no Triton). `variant` picks the file and
    window (see serving_variant); `max_length` and `optimization` (ONNX Runtime's graph optimisation level:
    basic, extended or all) override them for measurements."""

    def __init__(
        self,
        model_dir: Path | str,
        threads: int = 2,
        variant: str = "card",
        max_length: int | None = None,
        optimization: str = "all",
    ):
        self.model_dir, self.threads, self.optimization = Path(model_dir), threads, optimization
        card = json.loads((self.model_dir / CARD_FILE).read_text())
        serving = serving_variant(card, variant)
        if max_length:
            serving["max_length"] = max_length
        self.variant, self.model_file = str(serving["variant"]), str(serving["file"])
        self.candidates = int(serving["candidates"])  # 0: the service's setting
        self.model_id, self.model_version = card["model_id"], served_version(card, serving)
        weights = served_weights(card)
        self.weight, self.maxsim_weight = weights["weight"], weights["maxsim_weight"]
        self.k = int(card["fusion"].get("k", fusion.RRF_K))
        self.max_length = int(serving["max_length"])
        # Set by warm_up(): an onnxruntime session and a tokenizers.Tokenizer.
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: set[str] = set()

    def warm_up(self) -> None:
        import onnxruntime as ort

        path = self.model_dir / self.model_file
        if not path.is_file():
            raise FileNotFoundError(
                f"{path}: the {self.variant} variant of {self.model_id} is missing; "
                f"`python -m services.reranker.training.variants --name {self.model_dir.name}` writes it"
            )
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = self.threads, 1
        options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, GRAPH_LEVELS[self.optimization])
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._tokenizer = pair_tokenizer(self.model_dir / "tokenizer.json", self.max_length)

    def feeds(self, query: str, passages: list[str]) -> dict[str, np.ndarray]:
        """The tokenised pairs, as the ONNX model takes them."""
        return pair_feeds(self._tokenizer, query, passages, self._input_names)

    def run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        """The model alone: one relevance logit per pair."""
        return self._session.run(None, feeds)[0][:, 0].astype(np.float32)

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0, dtype=np.float32)
        return self.run(self.feeds(query, passages))


class HubScorer:
    def __init__(self, name: str, max_length: int = 256, threads: int = 2):
        self.name, self.max_length, self.threads = name, max_length, threads
        self.model_id, self.model_version, self.weight, self.k = name, "hub", 1.0, fusion.RRF_K
        self.maxsim_weight = 0.0
        self._model: Any = None  # a sentence_transformers.CrossEncoder, loaded by warm_up()

    def warm_up(self) -> None:
        import torch
        from sentence_transformers import CrossEncoder

        torch.set_num_threads(self.threads)
        self._model = CrossEncoder(self.name, max_length=self.max_length, device="cpu")

    def score(self, query: str, passages: list[str]) -> np.ndarray:
        return np.asarray(self._model.predict([(query, p) for p in passages], activation_fn=None), dtype=np.float32)


def resolve_scorer(name: str, cache_root: Path, threads: int = 2, variant: str = "card"):
    """The in-process scorer, resolved in a fixed order (logged): an explicit model folder, a model of that
    name in the local cache (what `ragmesh train-reranker --name` wrote), a hub name. None when nothing
    loads (the caller says how to train one). `variant` is the trained model's (see serving_variant)."""
    if os.path.isdir(name) and (Path(name) / CARD_FILE).is_file():
        log.info("cross-encoder: explicit path %s (variant %s)", name, variant)
        return OnnxScorer(name, threads, variant)
    cached = cache_root / name
    if (cached / CARD_FILE).is_file():
        log.info("cross-encoder: local cache %s (variant %s)", cached, variant)
        return OnnxScorer(cached, threads, variant)
    if "/" in name and not os.path.exists(name):
        log.info("cross-encoder: %s is not a folder or a cached model; hub name for sentence-transformers", name)
        return HubScorer(name, threads=threads)
    log.warning(
        "cross-encoder %r: not a model folder, not in %s, not a hub name; train one with "
        "`ragmesh train-reranker --name %s`",
        name,
        cache_root,
        name,
    )
    return None


class CrossEncoderReranker:
    """Cross-encoder scores fused with the first stage; when the model's card says so, the maxsim rank of
    the head is a third signal (its weight chosen with the model's on the tuning split)."""

    def __init__(self, scorer, rescore_k: int = 50, maxsim_factory=None):
        self.scorer = scorer
        self.rescore_k = rescore_k
        self._maxsim_factory, self._maxsim = maxsim_factory, None
        self._maxsim_pool: ThreadPoolExecutor | None = None

    @property
    def model_id(self) -> str:
        return f"{self.scorer.model_id}+maxsim" if self.scorer.maxsim_weight > 0 else self.scorer.model_id

    @property
    def model_version(self) -> str:
        return self.scorer.model_version

    @property
    def query_model_id(self) -> str:
        """The fused maxsim's embedder, whose query vector it scores with; none when maxsim is not fused."""
        return self._maxsim_ranker().query_model_id if self.scorer.maxsim_weight > 0 else ""

    @property
    def view_vectors_read(self) -> int:
        """The fused maxsim's, within the head this reranker rescores; none when maxsim is not fused."""
        if self.scorer.maxsim_weight <= 0:
            return 0
        return min(self._maxsim_ranker().view_vectors_read, self._rescored())

    @property
    def candidates_read(self) -> int:
        return self._rescored()

    def warm_up(self) -> None:
        self.scorer.warm_up()
        if self.scorer.maxsim_weight > 0:
            self._maxsim_ranker()

    def _maxsim_ranker(self):
        if self._maxsim is None:
            if self._maxsim_factory is None:
                raise Unavailable(f"{self.scorer.model_id} fuses maxsim ranks, but no embedder is configured")
            self._maxsim = self._maxsim_factory()
            self._maxsim.warm_up()
            self._maxsim_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="maxsim")
        return self._maxsim

    def forget(self, chunk_ids: list[str]) -> tuple[int, int, int, int]:
        """Erasure: the cross-encoder caches nothing; the maxsim ranker it fuses may."""
        if self._maxsim is None:
            return 0, 0, 0, 0
        return self._maxsim.forget(chunk_ids)

    def _rescored(self) -> int:
        """Candidates the cross-encoder scores: a CPU variant chosen with fewer rescores only those (the card
        says so; 0: the setting)."""
        limit = getattr(self.scorer, "candidates", 0) or self.rescore_k
        return min(self.rescore_k, limit)

    def run(
        self, query: str, candidates: list[ScoredChunk], top_n: int, query_vector: np.ndarray | None = None
    ) -> list[ScoredChunk]:
        """`query_vector`: the query embedded with `query_model_id`'s model, for the fused maxsim ranks."""
        if not query.strip():
            raise InvalidArgument("query", "is empty")
        rescore = self._rescored()
        head, tail = candidates[:rescore], candidates[rescore:]
        if not head:
            return []
        pending = None
        if self.scorer.maxsim_weight > 0:
            # Embedding the head's sentences overlaps the cross-encoder call (Triton's GPU in production).
            maxsim = self._maxsim_ranker()
            assert self._maxsim_pool is not None  # made with the maxsim ranker
            pending = self._maxsim_pool.submit(maxsim.head_scores, query, head, query_vector)
        scores = self.scorer.score(query, [rerank_text(sc.chunk) for sc in head])
        more = ((pending.result(), self.scorer.maxsim_weight),) if pending else ()
        ranked = fusion.reorder(head, tail, scores, self.scorer.weight, self.scorer.k, more)
        for i, sc in enumerate(head):
            # The calibrated abstention threshold reads this: the model's probability of relevance.
            sc.scores.rerank_score = 1.0 / (1.0 + math.exp(-float(scores[i])))
        return ranked[:top_n]
