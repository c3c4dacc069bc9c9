"""The support reader's input text and the answer decision over its scores (the card, the choice of units)."""

import json

import numpy as np
import pytest

from services.generator import reading, selection, support
from shared.model import ScoredChunk, StageScores
from tests.conformance.index_suite import chunk, meta

PRICES = "| Plan | Monthly price |\n| --- | --- |\n| Starter | $19 |\n| Team | $79 |\n"
WRAPPED = "Either party may stop a renewal by\nnotice given no later than 30 days\nbefore the term ends."


def passage(body: str, path=("Plans",), score: float = 0.8, title: str = "pricing") -> ScoredChunk:
    c = chunk(meta(doc=title), 0, body)
    c.heading_path = list(path)
    c.char_start, c.char_end = 100, 100 + len(body)
    return ScoredChunk(c, StageScores(rerank_score=score))


def test_the_reader_reads_a_table_row_cell_by_cell_under_its_heading_path():
    units = selection.candidates("team plan monthly price", [passage(PRICES, path=("Price list", "Plans"))])
    texts = {PRICES[u.start : u.end]: u.text for u in units}
    assert texts["| Team | $79 |"] == "pricing > Price list > Plans: Plan: Team; Monthly price: $79"


def test_the_reader_reads_a_wrapped_sentence_as_one_line():
    (unit,) = selection.candidates("renewal notice", [passage(WRAPPED, path=("Renewal",), title="msa")])
    assert unit.text == "msa > Renewal: " + " ".join(WRAPPED.split())


def answer_model(coef: list[float], intercept: float) -> selection.Logistic:
    n = len(reading.READER_FEATURES)
    return selection.Logistic(reading.READER_FEATURES, (0.0,) * n, (1.0,) * n, tuple(coef), intercept)


def best_support_card(threshold: float = 0.5) -> reading.ReaderCard:
    """P(answer) = sigmoid(best unit's support logit): the decision follows the reader's best unit."""
    coef = [0.0] * len(reading.READER_FEATURES)
    coef[reading.READER_FEATURES.index("best_support_logit")] = 1.0
    return reading.ReaderCard("sample", "ragmesh-support/sample@abc", answer_model(coef, 0.0), threshold)


def test_the_decision_quotes_the_best_supported_unit_and_companions_and_abstains_below_its_threshold():
    units = selection.candidates("team plan monthly price", [passage(PRICES)])
    card = best_support_card(0.5)
    chosen, probability = card.decide(units, np.array([0.2, 0.9]), max_units=3)
    assert chosen == [1] and probability == pytest.approx(0.9, abs=1e-6)
    chosen, _ = card.decide(units, np.array([0.6, 0.9]), max_units=3)
    assert chosen == [1, 0]  # the other row has more than half the best support
    chosen, probability = card.decide(units, np.array([0.2, 0.3]), max_units=3)
    assert chosen == [] and probability == pytest.approx(0.3, abs=1e-6)


def test_reader_features_read_the_best_units_passage():
    units = selection.candidates("team plan monthly price", [passage(PRICES, score=0.4), passage(WRAPPED, score=0.9)])
    x = reading.reader_features(units, np.array([0.1, 0.95, 0.2]))[0]
    named = dict(zip(reading.READER_FEATURES, x, strict=True))
    assert named["best_unit_passage_score"] == pytest.approx(0.4)
    assert named["top_passage_score"] == pytest.approx(0.9)
    assert named["best_support_logit"] > named["second_support_logit"]


def test_card_round_trips_and_refuses_other_features(tmp_path):
    path = tmp_path / "card.json"
    card = best_support_card(0.42)
    card.save(path)
    loaded = reading.ReaderCard.load(path)
    assert loaded == card and loaded.model_id.startswith("reader+logreg-")
    data = json.loads(path.read_text())
    data["answer"]["features"][-1] = "something_else"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="refit"):
        reading.ReaderCard.load(path)


def test_a_reader_is_resolved_by_folder_or_by_name_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMESH_GENERATOR_SUPPORT_CACHE", str(tmp_path))
    assert support.resolve("sample") is None
    (tmp_path / "sample").mkdir()
    (tmp_path / "sample" / support.CARD_FILE).write_text("{}")
    assert support.resolve("sample") == tmp_path / "sample"
    assert support.resolve(str(tmp_path / "sample")) == tmp_path / "sample"
