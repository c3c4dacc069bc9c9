from services.evaluation.cases import EvalCase, Gold
from services.evaluation.withheld import SUFFIX, WITHHELD, with_gold_withheld


def _case(case_id: str, *gold_docs: str, tenant: str = "t") -> EvalCase:
    gold = [Gold(doc_id=d, version="1", evidence="x") for d in gold_docs]
    return EvalCase(case_id=case_id, question=f"question {case_id}", tenant=tenant, category="identifier", gold=gold)


def test_each_answerable_case_gets_an_unanswerable_twin_that_searches_without_its_gold_documents():
    cases = [_case("q1", "manuals/cli-reference"), _case("q2", "tickets/10502", "manuals/cli-reference"), _case("u1")]
    out = with_gold_withheld(cases)
    assert out[:3] == cases  # the labelled cases first, unchanged
    twins = {c.case_id: c for c in out[3:]}
    assert set(twins) == {"q1" + SUFFIX, "q2" + SUFFIX}  # no twin for an unanswerable case
    assert twins["q1" + SUFFIX].exclude_document_ids == ("manuals/cli-reference",)
    assert twins["q2" + SUFFIX].exclude_document_ids == ("manuals/cli-reference", "tickets/10502")
    for twin in twins.values():
        assert not twin.answerable and twin.category == WITHHELD and twin.question.startswith("question q")
    assert all(not c.exclude_document_ids for c in cases)  # the labelled cases search everything


def test_a_reported_near_miss_is_unanswerable_when_replayed_and_compared():
    from services.evaluation.calibrate import results_from_report
    from services.evaluation.compare import case_value
    from services.evaluation.report import build_report
    from services.evaluation.runner import CaseResult

    twin = with_gold_withheld([_case("q1", "manuals/cli-reference")])[1]
    answered = CaseResult(twin, {}, [], 0, {"total": 0.01}, answered=True, answer_correct=False)
    answered.top_rerank_score = 0.9
    reported = build_report([answered], {"name": "t"}, answers=True)["cases"][0]
    assert reported["category"] == WITHHELD and reported["answerable"] is False
    assert not results_from_report({"cases": [reported]})[0].case.answerable
    # Paired by `ragmesh compare` as a near miss, not with the written unanswerable questions.
    assert case_value(reported, "near_miss") == 1.0
    assert case_value(reported, "false_answer") is None and case_value(reported, "answer_accuracy") is None
    # A report from before answerability was recorded: read from the category, as it was.
    older = {k: v for k, v in reported.items() if k != "answerable"} | {"category": "unanswerable"}
    assert not results_from_report({"cases": [older]})[0].case.answerable


def test_near_misses_are_rated_apart_from_the_written_unanswerable_questions():
    from services.evaluation.report import answer_metrics
    from services.evaluation.runner import CaseResult

    written = EvalCase(case_id="u1", question="?", tenant="t", category="unanswerable", gold=[])
    twins = with_gold_withheld([_case("q1", "manuals/cli-reference"), _case("q2", "tickets/10502")])[2:]
    results = [
        CaseResult(written, {}, [], 0, {}, answered=False),
        CaseResult(twins[0], {}, [], 0, {}, answered=True, answer_correct=False),
        CaseResult(twins[1], {}, [], 0, {}, answered=False),
    ]
    metrics = answer_metrics(results)
    assert metrics["false_answer_rate"] == 0.0 and metrics["unanswerable"] == 1
    assert metrics["near_miss_answer_rate"] == 0.5 and metrics["near_misses"] == 2
    assert answer_metrics(results[:1]).get("near_miss_answer_rate") is None  # a run without near misses


def test_the_report_shows_the_near_miss_column_only_for_a_run_that_asked_them(tmp_path):
    from services.evaluation.report import build_report, write_markdown
    from services.evaluation.runner import CaseResult

    case = _case("q1", "manuals/cli-reference")
    twin = with_gold_withheld([case])[1]
    plain = [CaseResult(case, {}, [], 0, {"total": 0.01}, answered=False)]
    for results, shown in ((plain, False), (plain + [CaseResult(twin, {}, [], 0, {"total": 0.01})], True)):
        write_markdown(build_report(results, {"name": "t"}, answers=True), tmp_path / "report.md")
        header = next(
            line for line in (tmp_path / "report.md").read_text().splitlines() if line.startswith("| | cases")
        )
        assert ("near_miss_answer_rate" in header) == shown  # the per-split and per-category tables' columns
