"""Answer metrics, per-split rows and triage of the evaluation report, from hand-made case results."""

from services.evaluation.cases import EvalCase, Gold
from services.evaluation.report import build_report
from services.evaluation.runner import CaseResult, triage


def result(cid, split, answerable=True, answered=False, correct=None, reason="", in_context=True):
    gold = [Gold("d", "1", "evidence", 0, 8)] if answerable else []
    case = EvalCase(cid, "q", "t", "general" if answerable else "unanswerable", gold, split)
    r = CaseResult(
        case,
        {gold[0].key: 1} if answerable else {},
        [True],
        1,
        {"total": 0.1},
        answered=answered,
        answer_correct=correct,
        citation_valid=True if answered else None,
        abstain_reason=reason,
        gold_in_context=in_context,
    )
    r.triage = triage(r)
    return r


def test_answer_metrics_per_split_and_the_triage_says_who_failed():
    results = [
        result("a", "test", answered=True, correct=True),
        result("b", "test", answered=True, correct=False),
        result("c", "test", reason="below_threshold: 0.5"),
        result("d", "test", reason="no_supporting_sentence"),
        result("e", "test", answerable=False, answered=True),
        result("f", "train", answered=True, correct=True),
    ]
    report = build_report(results, {"name": "t"}, answers=True)
    test = report["per_split"]["test"]
    assert test["answer_accuracy"] == 0.25 and test["over_abstention_rate"] == 0.5
    assert test["wrong_answer_rate"] == 0.5 and test["false_answer_rate"] == 1.0
    assert report["per_split"]["train"]["answer_accuracy"] == 1.0
    assert [c["split"] for c in report["cases"]] == ["test"] * 5 + ["train"]
    assert report["triage"] == {"wrong_citation": 1, "gate_abstained": 1, "generator_abstained": 1, "false_answer": 1}
