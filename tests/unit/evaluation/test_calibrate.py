import pytest

from services.evaluation.calibrate import calibrate, choose_threshold
from services.evaluation.cases import EvalCase, Gold
from services.evaluation.runner import CaseResult


def result(score, answerable, answered=True, correct=True):
    case = EvalCase("q", "?", "t", "general" if answerable else "unanswerable", [Gold("d")] if answerable else [])
    r = CaseResult(case, {}, [], 0, {}, answered=answered, answer_correct=correct if answerable else None)
    r.top_rerank_score = score
    return r


def test_threshold_keeps_false_answers_within_target_and_answers_the_most():
    results = [result(s, True) for s in (0.9, 0.8, 0.7, 0.6, 0.5)] + \
              [result(s, False) for s in (0.65, 0.4, 0.3, 0.2)]
    threshold, far, answered, correct = choose_threshold(results, target_far=0.0)
    assert threshold == pytest.approx(0.7)          # 0.65 is an unanswerable question: stop above it
    assert far == 0.0 and answered == pytest.approx(3 / 5)
    threshold, far, *_ = choose_threshold(results, target_far=0.25)
    assert threshold == pytest.approx(0.5) and far == pytest.approx(0.25)


def test_generator_abstentions_count_as_not_answered():
    results = [result(0.9, True), result(0.95, False, answered=False), result(0.2, True)]
    threshold, far, answered, _ = choose_threshold(results, target_far=0.0)
    assert far == 0.0 and answered == 1.0 and threshold == float("-inf")


def test_calibration_records_the_model_it_was_made_for():
    cal = calibrate([result(0.9, True), result(0.1, False)], "maxsim/m", "extractive-v1", 0.05, "sample.jsonl")
    assert cal.reranker_model_id == "maxsim/m" and cal.false_answer_rate == 0.0
    assert 0.1 < cal.threshold <= 0.9
