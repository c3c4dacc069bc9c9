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
    results = [result(s, True) for s in (0.9, 0.8, 0.7, 0.6, 0.5)] + [result(s, False) for s in (0.65, 0.4, 0.3, 0.2)]
    threshold, far, answered, correct = choose_threshold(results, target_far=0.0)
    assert threshold == pytest.approx(0.7)  # 0.65 is an unanswerable question: stop above it
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


def test_pooled_calibration_from_reports_drops_the_test_split_and_reports_each(tmp_path, capsys):
    import argparse
    import json

    from services.evaluation.command import calibrate_from_report

    def row(cid, score, answerable, split=""):
        return {
            "id": cid,
            "question": "?",
            "category": "general" if answerable else "unanswerable",
            "split": split,
            "answered": True,
            "citation_valid": True,
            "answer_correct": answerable,
            "gold_ranks": {},
            "top_rerank_score": score,
        }

    sample = {
        "meta": {"name": "sample", "reranker_model_id": "m"},
        "cases": [row("a", 0.9, True, "train"), row("b", 0.6, False, "dev"), row("c", 0.99, False, "test")],
    }
    scifact = {
        "meta": {"name": "scifact", "reranker_model_id": "m"},
        "cases": [row("s1", 0.8, True), row("s2", 0.7, False)],
    }
    paths = []
    for name, report in (("sample", sample), ("scifact", scifact)):
        paths.append(str(tmp_path / f"{name}.json"))
        (tmp_path / f"{name}.json").write_text(json.dumps(report))
    out = tmp_path / "calibration.json"
    args = argparse.Namespace(
        from_report=paths, splits="train,dev", at=None, reranker_model_id=None, target_far=0.0, out=str(out)
    )
    assert calibrate_from_report(args) == 0
    # The test split's unanswerable 0.99 is never seen; the pooled threshold clears both other domains.
    assert json.loads(out.read_text())["threshold"] == pytest.approx(0.8)
    printed = capsys.readouterr().out
    assert "sample: gate 0.8000" in printed and "scifact: gate 0.8000" in printed and "pooled:" in printed
