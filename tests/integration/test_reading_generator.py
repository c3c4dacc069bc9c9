"""The support-reader generator on real weights: the sample cross-encoder that `make reranker` trains (a
prerequisite of make test), read zero-shot through the support reader's own folder layout and onnxruntime path,
scores every unit of the context in one batch; the generator quotes the unit that answers, abstains below its
card's threshold, and refuses a card fitted on another reader. The fine-tuned reader (`make support-reader`) uses
the same code with other weights; no timing here (`make bench-answer`)."""

import json

import pytest

from services.generator import reading, selection, support
from services.generator.learned import ReadingGenerator
from services.reranker.triton_server import rerankers_root
from shared.model import ScoredChunk, StageScores
from tests.conformance.index_suite import chunk, meta

pytestmark = [pytest.mark.integration]

SAMPLE = rerankers_root() / "sample"
BODY = (
    "The office is closed on public holidays.\n\n"
    "The Team plan costs $79 per month, billed yearly.\n\n"
    "Refunds are paid back to the original card within 5 business days."
)


@pytest.fixture(scope="module")
def reader_dir(tmp_path_factory):
    if not (SAMPLE / "model.onnx").is_file():
        pytest.fail(f"no trained cross-encoder in {SAMPLE}: run `make reranker` (make test does)")
    folder = tmp_path_factory.mktemp("support") / "zero-shot"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json"):
        (folder / name).symlink_to(SAMPLE / name)
    card = {"model_id": "ragmesh-support/zero-shot", "model_version": "test", "max_length": 64, "data": {}}
    (folder / support.CARD_FILE).write_text(json.dumps(card))
    return folder


def card_file(tmp_path, reader_dir, threshold: float, reader_id: str = "ragmesh-support/zero-shot@test"):
    """A decision that follows the best unit's support alone."""
    n = len(reading.READER_FEATURES)
    coef = [1.0 if name == "best_support_logit" else 0.0 for name in reading.READER_FEATURES]
    answer = selection.Logistic(reading.READER_FEATURES, (0.0,) * n, (1.0,) * n, tuple(coef), 0.0)
    path = tmp_path / "reader-card.json"
    reading.ReaderCard(str(reader_dir), reader_id, answer, threshold).save(path)
    return str(path)


def context() -> list[ScoredChunk]:
    c = chunk(meta(doc="pricing"), 0, BODY)
    c.heading_path = ["Plans and billing"]
    c.char_start, c.char_end = 40, 40 + len(BODY)
    return [ScoredChunk(c, StageScores(rerank_score=0.9))]


def test_the_reader_quotes_the_unit_that_answers_with_its_exact_span(tmp_path, reader_dir):
    generator = ReadingGenerator(card_file(tmp_path, reader_dir, threshold=0.0), max_units=1)
    generator.warm_up()
    answer = generator.run("how much is the team plan per month", context())
    assert not answer.abstained and answer.generator_id.startswith("extractive-v3/reader+logreg-")
    (cite,) = answer.citations
    assert cite.quote == "The Team plan costs $79 per month, billed yearly."
    assert BODY[cite.char_start - 40 : cite.char_end - 40] == cite.quote


def test_below_the_threshold_it_abstains(tmp_path, reader_dir):
    generator = ReadingGenerator(card_file(tmp_path, reader_dir, threshold=1.0))
    generator.warm_up()
    answer = generator.run("how much is the team plan per month", context())
    assert answer.abstained and answer.reason.startswith("no_supporting_unit: p(answer)")


def test_a_card_fitted_on_another_reader_is_refused(tmp_path, reader_dir):
    generator = ReadingGenerator(card_file(tmp_path, reader_dir, 0.5, reader_id="ragmesh-support/zero-shot@other"))
    with pytest.raises(RuntimeError, match="fitted on reader ragmesh-support/zero-shot@other"):
        generator.warm_up()
