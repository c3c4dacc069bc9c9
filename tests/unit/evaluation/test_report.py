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


def test_evidence_completeness_reads_right_answers_to_questions_with_several_gold_spans():
    def two_spans(cid, answered, correct, cited):
        r = result(cid, "dev", answered=answered, correct=correct)
        r.case.gold.append(Gold("d", "1", "more evidence", 20, 33))
        r.gold_cited = cited
        return r

    results = [
        two_spans("a", True, True, 1.0),  # both parts answered
        two_spans("b", True, True, 0.5),  # half the question
        two_spans("c", True, False, 0.0),  # wrong: not a measure of completeness
        two_spans("d", False, None, None),
        result("e", "dev", answered=True, correct=True),  # one span: complete whenever right
    ]
    results[4].gold_cited = 1.0
    report = build_report(results, {"name": "t"}, answers=True)
    assert report["overall"]["evidence_completeness"] == 0.75
    assert [c["gold_cited"] for c in report["cases"]] == [1.0, 0.5, 0.0, None, 1.0]
    only_single = build_report([results[4]], {"name": "t"}, answers=True)
    assert only_single["overall"]["evidence_completeness"] is None


def test_a_degraded_answer_is_counted_and_named_in_the_report(tmp_path):
    """An answer given without the reranker measures the fallback: the report counts such answers, each case says
    why, and the summary says so above the figures."""
    from services.evaluation.report import write_markdown

    plain, degraded = result("a", "test", answered=True, correct=True), result("b", "test")
    degraded.degraded = "reranker unavailable: connection refused"
    report = build_report([plain, degraded], {"name": "t"}, answers=True)
    assert report["degraded"] == 1
    assert [c["degraded"] for c in report["cases"]] == ["", "reranker unavailable: connection refused"]
    write_markdown(report, tmp_path / "report.md")
    assert "1 answers degraded" in (tmp_path / "report.md").read_text()
    write_markdown(build_report([plain], {"name": "t"}, answers=True), tmp_path / "plain.md")
    assert "degraded" not in (tmp_path / "plain.md").read_text()
