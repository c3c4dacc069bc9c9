"""Every embedder the registry knows, loaded from local files only (no network).

A model that `make models` fetches but that is not in the cache FAILS (it is not skipped): the fix is
to run `make models`."""

import numpy as np
import pytest

from shared.embedding import (
    KNOWN_MODELS,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    TokenCounter,
    build_embedder,
    build_query_embedder,
)
from shared.embedding.registry import BGE_QUERY_PREFIX, MINILM, canonical_name, is_cached, known_model_dir

ONNX_MODELS = sorted(KNOWN_MODELS)
ALL_MODELS = [MINILM, *ONNX_MODELS]
EXPECTED_PREFIXES = {
    MINILM: ("", ""),
    "BAAI/bge-small-en-v1.5": (BGE_QUERY_PREFIX, ""),
    "BAAI/bge-small-en-v1.5-q": (BGE_QUERY_PREFIX, ""),
    "intfloat/e5-small-v2": ("query: ", "passage: "),
    "intfloat/e5-small-v2-q": ("query: ", "passage: "),
}

PARAPHRASE = (
    "How do plants turn sunlight into energy?",
    "Photosynthesis lets plants convert light energy into chemical energy.",
)
UNRELATED = "The central bank raised interest rates by half a point on Tuesday."
PASSAGES = [
    "Aspirin irreversibly inhibits cyclooxygenase.",
    "A longer passage: " + "the mitochondria is the powerhouse of the cell, " * 12,
    "short",
    "Vitamin D deficiency is associated with an increased risk of fractures in older adults.",
]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.setenv(var, "1")


_loaded: dict[str, object] = {}


def load(name: str):
    folder = known_model_dir(name)
    if folder is not None and not is_cached(folder):
        pytest.fail(f"{name}: no model.onnx + tokenizer.json in {folder}; run `make models` first")
    if name not in _loaded:
        embedder = build_embedder(name, threads=2)
        embedder.warm_up()
        _loaded[name] = embedder
    return _loaded[name]


@pytest.mark.parametrize("name", ALL_MODELS)
def test_loads_from_local_files_with_the_right_id_and_dimension(name):
    embedder = load(name)
    assert isinstance(embedder, OnnxEmbedder if name in KNOWN_MODELS else SentenceTransformerEmbedder)
    assert embedder.spec.model_id == name
    assert embedder.spec.dimension == 384
    assert embedder.spec.max_tokens == (256 if name == MINILM else 512)
    vectors = embedder.embed_passages(PASSAGES)
    assert vectors.shape == (len(PASSAGES), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


@pytest.mark.parametrize("name", ALL_MODELS)
def test_a_paraphrase_scores_above_an_unrelated_passage(name):
    embedder = load(name)
    query = embedder.embed_queries([PARAPHRASE[0]])[0]
    passages = embedder.embed_passages([PARAPHRASE[1], UNRELATED])
    related, unrelated = passages @ query
    assert related > unrelated + 0.1, (related, unrelated)


@pytest.mark.parametrize("name", ALL_MODELS)
def test_query_and_passage_prefixes_are_applied(name, monkeypatch):
    embedder = load(name)
    query_prefix, passage_prefix = EXPECTED_PREFIXES[name]
    assert (embedder.spec.query_prefix, embedder.spec.passage_prefix) == (query_prefix, passage_prefix)
    seen = []
    real = embedder._encode
    monkeypatch.setattr(embedder, "_encode", lambda texts: seen.append(list(texts)) or real(texts))
    embedder.embed_queries(["q1"])
    embedder.embed_passages(["p1", "p2"])
    assert seen == [[query_prefix + "q1"], [passage_prefix + "p1", passage_prefix + "p2"]]


@pytest.mark.parametrize("name", ONNX_MODELS)
def test_batching_by_length_does_not_change_the_vectors(name):
    embedder = load(name)
    together = embedder.embed_passages(PASSAGES)
    alone = np.vstack([embedder.embed_passages([p]) for p in PASSAGES])
    if name.endswith("-q"):
        # Dynamic int8 quantises activations per tensor, so a row depends a little on its batch.
        assert (together * alone).sum(axis=1).min() > 0.99
    else:
        np.testing.assert_allclose(together, alone, atol=2e-4)
    assert embedder.embed_passages([]).shape == (0, 384)


@pytest.mark.parametrize("name", ["BAAI/bge-small-en-v1.5", "intfloat/e5-small-v2"])
def test_the_int8_export_stays_close_to_fp32(name):
    fp32, int8 = load(name).embed_passages(PASSAGES), load(name + "-q").embed_passages(PASSAGES)
    cosines = (fp32 * int8).sum(axis=1)
    assert cosines.min() > 0.95, cosines


def test_aliases_resolve_to_the_stored_model_id():
    assert canonical_name("bge") == "BAAI/bge-small-en-v1.5"
    assert canonical_name("e5-small-v2-q") == "intfloat/e5-small-v2-q"
    assert canonical_name("minilm") == MINILM
    assert canonical_name("some/hub-model") == "some/hub-model"
    assert isinstance(build_embedder("some/hub-model"), SentenceTransformerEmbedder)  # not loaded here


@pytest.mark.parametrize("name", ALL_MODELS)
def test_the_chunker_budget_is_the_window_less_the_passage_prefix(name):
    load(name)  # fails with the `make models` hint when the files are missing
    counter = TokenCounter(name)
    counter.warm_up()
    window = 256 if name == MINILM else 512
    prefix_tokens = 2 if name.startswith("intfloat/") else 0  # "passage: " is two word pieces
    assert counter.max_tokens == window - prefix_tokens


def test_a_sentence_transformers_embedder_has_its_spec_before_warm_up():
    embedder = SentenceTransformerEmbedder(MINILM)
    spec = embedder.spec  # read from the model, which this loads
    assert (spec.model_id, spec.dimension, spec.max_tokens) == (MINILM, 384, 256)
    assert embedder.embed_queries(["a query"]).shape == (1, 384)


def test_a_known_model_outside_the_cache_has_its_spec_without_the_hub(monkeypatch, tmp_path):
    monkeypatch.setenv("RAGMESH_MODEL_CACHE", str(tmp_path))  # empty: the hub fallback, offline here
    embedder = build_embedder("bge")
    assert isinstance(embedder, SentenceTransformerEmbedder)
    spec = embedder.spec  # loading would fail offline: the registry's spec answers
    assert (spec.model_id, spec.dimension, spec.query_prefix) == ("BAAI/bge-small-en-v1.5", 384, BGE_QUERY_PREFIX)


def test_questions_can_be_embedded_by_the_int8_export_under_the_same_model_id():
    fp32, int8 = build_query_embedder("bge", "fp32"), build_query_embedder("bge", "int8")
    assert fp32.spec.query_encoder == fp32.spec.model_id == int8.spec.model_id == "BAAI/bge-small-en-v1.5"
    # Same rows searched, but a vector that says which export made it: another stage must not take it for fp32's.
    assert int8.spec.query_encoder == "BAAI/bge-small-en-v1.5+int8-queries"
    assert int8.spec.query_prefix == BGE_QUERY_PREFIX
    for e in (fp32, int8):
        e.warm_up()
    questions = [PARAPHRASE[0], "how long do I have to ask for a refund", "E-4412 sync conflict"]
    cosines = (fp32.embed_queries(questions) * int8.embed_queries(questions)).sum(axis=1)
    assert cosines.min() > 0.98, cosines
    # It ranks passages embedded by the fp32 model as the fp32 question does.
    passages = fp32.embed_passages([PARAPHRASE[1], UNRELATED])
    scores = int8.embed_queries([PARAPHRASE[0]]) @ passages.T
    assert scores[0, 0] > scores[0, 1]


@pytest.mark.parametrize("name", ["bge-q", MINILM])  # already int8; no int8 export registered
def test_a_model_without_an_int8_export_embeds_questions_itself(name):
    embedder = build_query_embedder(name, "int8")
    assert embedder.spec.query_variant == "" and embedder.spec.query_encoder == canonical_name(name)


def test_questions_on_the_passages_model_reuse_the_embedder_the_caller_holds():
    passages = build_embedder("bge")
    assert build_query_embedder("bge", "fp32", passages=passages) is passages  # one copy of the model, not two
    int8_passages = build_embedder("bge-q")
    assert build_query_embedder("bge-q", "int8", passages=int8_passages) is int8_passages  # already the int8 model
    assert build_query_embedder("bge", "int8", passages=passages) is not passages


def test_an_unknown_query_variant_is_refused():
    with pytest.raises(ValueError, match="int4"):
        build_query_embedder("bge", "int4")
