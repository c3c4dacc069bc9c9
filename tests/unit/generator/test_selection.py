"""Answer selection: the features it reads, its card, and how it chooses units."""

import json

import numpy as np
import pytest

from services.generator import selection
from services.generator.learned import SelectingGenerator
from shared.model import ScoredChunk, StageScores
from tests.conformance.index_suite import chunk, meta

PRICES = "| Plan | Monthly price |\n| --- | --- |\n| Starter | $19 |\n| Team | $79 |\n"
CODES = "E-4421 is a token error.\nResolution: sign out and sign in again."


def passage(body, path=("Section",), score=0.8, sims=()):
    c = chunk(meta(doc="d"), 0, body)
    c.heading_path = list(path)
    c.char_start, c.char_end = 100, 100 + len(body)
    return ScoredChunk(c, StageScores(rerank_score=score, unit_similarity=list(sims)))


def by_text(units, body):
    return {body[u.start : u.end]: u.features for u in units}


def test_a_table_row_is_read_with_its_header_and_the_header_is_not_a_unit():
    units = selection.candidates("team plan monthly price", [passage(PRICES, path=("Plans",))])
    features = by_text(units, PRICES)
    assert set(features) == {"| Starter | $19 |", "| Team | $79 |"}
    team = features["| Team | $79 |"]
    assert team["table_row"] == 1.0 and team["table_header_coverage"] > 0
    assert team["coverage"] > features["| Starter | $19 |"]["coverage"]


def test_an_identifier_the_question_does_not_name_is_foreign():
    units = selection.candidates("E-4412 how to fix", [passage(CODES, path=("Sync errors",))])
    first = by_text(units, CODES)["E-4421 is a token error."]
    assert first["identifiers_named"] == 1.0
    assert first["identifiers_covered"] == 0.0 and first["identifiers_foreign"] == 1.0


def test_unit_similarity_comes_from_the_reranker_and_a_missing_one_takes_the_weakest():
    units = selection.candidates("how to fix", [passage(CODES, sims=[0.9])])
    first, second = units
    assert first.features["similarity"] == pytest.approx(0.9) and first.features["similarity_missing"] == 0.0
    assert second.features["similarity"] == pytest.approx(0.9) and second.features["similarity_missing"] == 1.0
    assert first.features["similarity_gap"] == pytest.approx(0.0)


def unit_model_preferring(feature: str) -> selection.Boosted:
    """Real LightGBM trees trained on synthetic units where `feature` alone decides the label."""
    import lightgbm

    rng = np.random.default_rng(0)
    x = rng.random((400, len(selection.FEATURES)))
    y = x[:, selection.FEATURES.index(feature)] > 0.8
    model = lightgbm.LGBMClassifier(n_estimators=30, num_leaves=4, min_child_samples=5, verbose=-1).fit(x, y)
    return selection.Boosted(selection.FEATURES, model.booster_.model_to_string())


def answer_model(coef=None, intercept=0.0) -> selection.Logistic:
    n = len(selection.ANSWER_FEATURES)
    return selection.Logistic(selection.ANSWER_FEATURES, (0.0,) * n, (1.0,) * n, tuple(coef or [0.0] * n), intercept)


def test_card_round_trips_and_refuses_other_features(tmp_path):
    path = tmp_path / "card.json"
    original = selection.SelectorCard(unit_model_preferring("coverage"), answer_model([0.1] * 10), 0.42)
    original.save(path)
    loaded = selection.SelectorCard.load(path)
    assert loaded.model_id == original.model_id and loaded.threshold == 0.42
    x = np.random.default_rng(1).random((5, len(selection.FEATURES)))
    assert np.allclose(loaded.unit(x), original.unit(x))
    data = json.loads(path.read_text())
    data["answer"]["features"] = data["answer"]["features"][:-1] + ["something_else"]
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="retrain"):
        selection.SelectorCard.load(path)


def test_companions_keep_only_units_with_half_the_best_support():
    assert selection.companions(np.array([0.9, 0.6, 0.4, 0.55]), 3) == [0, 1, 3]
    assert selection.companions(np.array([0.9, 0.6, 0.4, 0.55]), 1) == [0]
    assert selection.companions(np.array([0.98, 0.45, 0.3, 0.2]), 3) == [0]


def test_the_generator_quotes_the_unit_its_card_prefers_and_abstains_below_the_threshold(tmp_path):
    # The answer model reads only the best unit's coverage: "parental leave" covers nothing in a price table.
    coef = [0.0] * len(selection.ANSWER_FEATURES)
    coef[selection.ANSWER_FEATURES.index("best_coverage")] = 10.0
    path = tmp_path / "card.json"
    selection.SelectorCard(unit_model_preferring("coverage"), answer_model(coef, -5.0), 0.5).save(path)
    gen = SelectingGenerator(str(path))
    gen.warm_up()
    answer = gen.run("team monthly price", [passage(PRICES, path=("Plans",))])
    assert not answer.abstained and answer.generator_id.startswith("extractive-v2/gbdt+logreg-")
    cite = answer.citations[0]
    assert cite.quote == "| Team | $79 |"
    assert PRICES[cite.char_start - 100 : cite.char_end - 100] == cite.quote
    refused = gen.run("parental leave", [passage(PRICES, path=("Plans",))])
    assert refused.abstained and refused.reason.startswith("no_supporting_unit")
    assert "parental" in refused.missing
