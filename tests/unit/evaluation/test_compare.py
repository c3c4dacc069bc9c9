import argparse
import json

import pytest

from services.evaluation.compare import compare, run


def _report(values):
    return {"cases": [{"id": str(i), "ndcg@10": v, "recall@5": v} for i, v in enumerate(values)]}


def test_a_consistent_gain_has_an_interval_above_zero():
    base = _report([0.5] * 60)
    new = _report([0.6 if i % 4 else 0.5 for i in range(60)])
    r = compare(base, new)["ndcg@10"]
    assert r["diff"] == pytest.approx(0.075)
    assert r["ci95"][0] > 0 and r["better"] == 45 and r["worse"] == 0


def test_noise_around_zero_is_not_a_gain():
    base = _report([0.5] * 60)
    new = _report([0.7 if i % 2 else 0.3 for i in range(60)])
    low, high = compare(base, new)["ndcg@10"]["ci95"]
    assert low < 0 < high


def test_only_shared_queries_are_compared_and_none_shared_is_an_error():
    base, new = _report([0.2, 0.4]), _report([0.4])
    assert compare(base, new)["queries"] == 1
    with pytest.raises(ValueError, match="share no query"):
        compare(_report([]), new)


def test_answer_outcomes_are_paired_per_case_and_restricted_to_a_split():
    def case(cid, category, answered, correct, split="test"):
        return {"id": cid, "category": category, "answered": answered, "answer_correct": correct, "split": split}

    base = {
        "cases": [
            case("a", "general", False, None),
            case("b", "general", True, False),
            case("c", "unanswerable", True, None),
            case("d", "general", True, True, "train"),
        ]
    }
    new = {
        "cases": [
            case("a", "general", True, True),
            case("b", "general", True, True),
            case("c", "unanswerable", False, None),
            case("d", "general", False, None, "train"),
        ]
    }
    result = compare(base, new, ("answer_accuracy", "wrong_answer", "over_abstention", "false_answer"), split="test")
    assert result["queries"] == 3
    assert result["answer_accuracy"]["base"] == 0.0 and result["answer_accuracy"]["new"] == 1.0
    assert result["wrong_answer"]["base"] == 0.5 and result["wrong_answer"]["new"] == 0.0
    assert result["over_abstention"]["base"] == 0.5 and result["over_abstention"]["new"] == 0.0
    assert result["false_answer"]["base"] == 1.0 and result["false_answer"]["new"] == 0.0


def test_completeness_pairs_right_answers_to_questions_with_several_gold_spans():
    def case(cid, answered, correct, cited, spans=2):
        return {
            "id": cid,
            "category": "multi_section",
            "answered": answered,
            "answer_correct": correct,
            "gold_spans": spans,
            "gold_cited": cited,
        }

    base = {"cases": [case("a", True, True, 0.5), case("b", True, True, 0.5), case("c", False, None, None)]}
    new = {"cases": [case("a", True, True, 1.0), case("b", True, True, 0.5), case("c", True, True, 1.0)]}
    single = {"cases": [case(c["id"], True, True, 1.0, spans=1) for c in base["cases"]]}
    result = compare(base, new, ("evidence_completeness",))
    assert result["evidence_completeness"]["base"] == 0.5 and result["evidence_completeness"]["new"] == 0.75
    assert result["evidence_completeness"]["better"] == 1 and result["evidence_completeness"]["worse"] == 0
    # One gold span a question (SciFact's claims): complete whenever right, so there is nothing to pair.
    assert compare(base, single, ("evidence_completeness", "answer_accuracy"))["evidence_completeness"] is None


def test_the_command_says_which_metric_has_nothing_to_pair_and_exits_0(tmp_path, capsys):
    """SciFact's reports record gold spans but no question has several: `ragmesh compare` raised a traceback."""
    case = {"id": "q1", "category": "general", "answered": True, "answer_correct": True, "gold_spans": 1}
    report = {"overall": {"answer_accuracy": 1.0}, "cases": [{**case, "ndcg@10": 1.0, "recall@5": 1.0}]}
    for name in ("base.json", "new.json"):
        (tmp_path / name).write_text(json.dumps(report))
    args = argparse.Namespace(base=str(tmp_path / "base.json"), new=str(tmp_path / "new.json"), split=None, json=None)
    assert run(args) == 0
    assert "evidence_completeness n/a: no shared case has it in both reports" in capsys.readouterr().out
