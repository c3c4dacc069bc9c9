"""Which CPU variant of a trained cross-encoder is chosen and served, and how held-out quality is computed."""

import json

import numpy as np
import pytest

from services.reranker.cross_encoder import CARD_FILE, OnnxScorer, served_version, serving_variant
from services.reranker.training.data import Candidate, Query
from services.reranker.training.variants import Config, Measured, choose, default_configs, query_ndcg

CARD = {"model_id": "ragmesh-ce/m", "model_version": "abc", "max_length": 256, "enabled": True, "fusion": {"k": 60}}


def _measured(variant, window, candidates, ndcg, ce_ndcg, cpu_p95, threads=2, optimization="all") -> Measured:
    return Measured(
        Config(variant, window, candidates, threads, optimization), ndcg, ce_ndcg, 0, 0, 0, cpu_p95, 10, 1.0
    )


def test_the_card_variant_is_served_by_default_and_fp32_on_request():
    card = {**CARD, "serving": {"variant": "int8", "file": "model.int8.onnx", "max_length": 128, "candidates": 30}}
    assert serving_variant(card) == {"variant": "int8", "file": "model.int8.onnx", "max_length": 128, "candidates": 30}
    assert serving_variant(card, "fp32") == {
        "variant": "fp32",
        "file": "model.onnx",
        "max_length": 256,
        "candidates": 0,
    }
    assert serving_variant(card, "int8-all")["file"] == "model.int8-all.onnx"
    # A card written before variants existed serves what it always served.
    assert serving_variant(CARD) == serving_variant(CARD, "fp32")


def test_the_reported_version_names_a_variant_other_than_the_full_model():
    assert served_version(CARD, serving_variant(CARD, "fp32")) == "abc"
    assert served_version(CARD, {"variant": "int8", "file": "model.int8.onnx", "max_length": 128}) == "abc+int8@128"
    assert served_version(CARD, {"variant": "fp32", "file": "model.onnx", "max_length": 128}) == "abc+fp32@128"


def test_a_card_variant_with_fewer_candidates_caps_what_the_reranker_rescores(tmp_path):
    from services.reranker.cross_encoder import CrossEncoderReranker

    card = {**CARD, "serving": {"variant": "int8", "file": "model.int8.onnx", "max_length": 128, "candidates": 20}}
    (tmp_path / CARD_FILE).write_text(json.dumps(card))
    scorer = OnnxScorer(tmp_path)
    assert scorer.candidates == 20 and OnnxScorer(tmp_path, variant="fp32").candidates == 0
    seen: list[int] = []
    scorer.score = lambda query, passages: seen.append(len(passages)) or np.zeros(len(passages))  # type: ignore
    from shared.model import Chunk, DocumentMeta, ScoredChunk, StageScores

    meta = DocumentMeta(tenant_id="t", document_id="d")
    chunks = [
        ScoredChunk(Chunk(f"c{i}", meta, [], "b", "b", 0, 1, "", 0, i), StageScores(fused_rank=i + 1))
        for i in range(50)
    ]
    ranked = CrossEncoderReranker(scorer, rescore_k=50).run("q", chunks, 50)
    assert seen == [20] and [c.chunk.chunk_id for c in ranked[20:]] == [f"c{i}" for i in range(20, 50)]


def test_a_missing_variant_file_names_the_command_that_writes_it(tmp_path):
    (tmp_path / CARD_FILE).write_text(json.dumps(CARD))
    scorer = OnnxScorer(tmp_path, variant="int8")
    with pytest.raises(FileNotFoundError, match="services.reranker.training.variants"):
        scorer.warm_up()


def test_the_fastest_variant_within_the_tolerance_and_budget_is_chosen():
    full = _measured("fp32", 256, 50, 0.70, 0.60, 2000)
    results = [
        full,
        _measured("fp32", 256, 50, 0.70, 0.60, 300, threads=1),  # a service setting, not a model variant
        _measured("int8-all", 256, 50, 0.69, 0.55, 300),  # too lossy
        _measured("int8", 256, 50, 0.698, 0.59, 560),  # within 0.005 and under 300 ms per thread
        _measured("int8", 128, 50, 0.697, 0.58, 400),  # faster still, also within
        _measured("int8", 128, 20, 0.697, 0.58, 160),  # drops candidates: only when nothing else fits
    ]
    chosen, figure = choose(results, weight=1.0)
    assert figure == "ndcg" and chosen is results[4]
    # Nothing that keeps every candidate fits a tighter budget: dropping candidates is the last lever.
    assert choose(results, weight=1.0, budget_ms=100)[0] is results[5]
    assert choose(results, weight=1.0, budget_ms=50)[0] is None


def test_a_model_with_no_fusion_weight_is_judged_by_its_own_ranking():
    results = [_measured("fp32", 96, 50, 0.80, 0.66, 1000), _measured("int8", 96, 50, 0.80, 0.64, 400)]
    chosen, figure = choose(results, weight=0.0)
    assert figure == "ce_ndcg" and chosen is None  # the fused figure cannot move at weight 0; its own did


def test_held_out_quality_reorders_only_the_rescored_head():
    query = Query("q", "text", {"d3": 1.0}, [Candidate(f"d{i}", f"t{i}", i) for i in range(1, 6)])
    lifts_d3 = np.array([0.0, 0.0, 9.0, 0.0, 0.0])
    assert query_ndcg(query, lifts_d3, 5, 1e6) == pytest.approx(1.0)  # the cross-encoder alone puts d3 first
    assert query_ndcg(query, lifts_d3, 2, 1e6) == pytest.approx(1 / np.log2(4))  # d3 beyond the head stays third


def test_the_default_study_starts_with_the_full_model_and_tries_each_lever():
    configs = default_configs(256)
    assert configs[0] == Config("fp32", 256)
    levers = {(c.variant, c.max_length, c.candidates, c.threads, c.optimization) for c in configs}
    assert {("int8", 256, 50, 2, "all"), ("int8-tensor", 256, 50, 2, "all"), ("int8", 128, 50, 2, "all")} <= levers
    assert {("fp32", 256, 20, 2, "all"), ("fp32", 256, 50, 1, "all"), ("fp32", 256, 50, 2, "basic")} <= levers
