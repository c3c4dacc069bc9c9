import pytest

from services.evaluation.calibrate import calibrate, choose_decision, choose_threshold, gated_outcome
from services.evaluation.cases import EvalCase, Gold
from services.evaluation.runner import CaseResult


def report_row(cid, score, category, answerable, split):
    """An answered case as report.json records it."""
    return {
        "id": cid,
        "question": "?",
        "category": category,
        "split": split,
        "answered": True,
        "citation_valid": True,
        "answer_correct": answerable,
        "gold_ranks": {},
        "top_rerank_score": score,
    }


def result(score, answerable, answered=True, correct=True, coverage=0.0):
    case = EvalCase("q", "?", "t", "general" if answerable else "unanswerable", [Gold("d")] if answerable else [])
    r = CaseResult(case, {}, [], 0, {}, answered=answered, answer_correct=correct if answerable else None)
    r.top_rerank_score, r.coverage = score, coverage
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
        return report_row(cid, score, "general" if answerable else "unanswerable", answerable, split)

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
    # A report holding degraded answers (rerank scores never computed for some) is refused, not fitted.
    scifact["degraded"] = 1
    (tmp_path / "scifact.json").write_text(json.dumps(scifact))
    with pytest.raises(SystemExit, match="scifact.json has 1 degraded answers"):
        calibrate_from_report(args)


def test_the_second_level_answers_below_the_threshold_only_with_coverage():
    """An unanswerable question at 0.65 sets the threshold above it; below it, the answerable questions whose
    answers cover the whole question are answered, the unanswerable one (half covered) is not."""
    results = [
        result(0.9, True, coverage=0.5),
        result(0.6, True, coverage=1.0),
        result(0.55, True, coverage=1.0),
        result(0.5, True, coverage=0.5),
        result(0.65, False, coverage=0.5),
        result(0.3, False, coverage=1.0),
    ]
    one = choose_threshold(results, target_far=0.0)
    decision = choose_decision(results, target_far=0.0)
    assert one[0] == pytest.approx(0.9) and one[3] == pytest.approx(1 / 4)
    rule = decision.rule
    assert rule.threshold == pytest.approx(0.9)
    assert rule.min_coverage == pytest.approx(1.0)
    assert rule.support_threshold is not None
    assert 0.3 < rule.support_threshold <= 0.55  # above the covered unanswerable question at 0.3
    assert decision.false_answer_rate == 0.0 and decision.correct == pytest.approx(3 / 4)
    outcome = gated_outcome(results, rule)
    assert outcome["answer_accuracy"] == pytest.approx(3 / 4) and outcome["false_answer_rate"] == 0.0
    # What is stored is what the gateway applies: the file's decision is the chosen one.
    assert calibrate(results, "maxsim/m", "extractive-v1", 0.0, "sample.jsonl").decision() == rule


def test_one_level_when_a_second_adds_no_right_answer():
    results = [result(0.9, True, coverage=1.0), result(0.5, True, coverage=0.4), result(0.6, False, coverage=1.0)]
    decision = choose_decision(results, target_far=0.0)
    assert decision.rule.support_threshold is None and decision.rule.threshold == pytest.approx(0.9)
    cal = calibrate(results, "maxsim/m", "extractive-v1", 0.0, "sample.jsonl")
    assert cal.support_threshold is None


def test_near_misses_in_a_report_are_left_out_of_the_calibration(tmp_path, capsys):
    import argparse
    import json

    from services.evaluation.command import calibrate_from_report

    def row(cid, score, category, answerable):
        return report_row(cid, score, category, answerable, "train") | {"answerable": answerable}

    report = {
        "meta": {"name": "sample", "reranker_model_id": "m"},
        "cases": [
            row("a", 0.9, "general", True),
            row("b", 0.7, "unanswerable", False),
            row("a~withheld", 0.95, "gold withheld", False),  # would push the threshold above 0.95
        ],
    }
    (tmp_path / "r.json").write_text(json.dumps(report))
    out = tmp_path / "calibration.json"
    args = argparse.Namespace(
        from_report=[str(tmp_path / "r.json")],
        splits="train,dev",
        at=None,
        reranker_model_id=None,
        target_far=0.0,
        out=str(out),
    )
    assert calibrate_from_report(args) == 0
    assert json.loads(out.read_text())["threshold"] == pytest.approx(0.9)
    assert "1 near misses (--withhold-gold) left out of the calibration" in capsys.readouterr().out
