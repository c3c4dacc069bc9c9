"""The evaluation gate on the sample set, through the live mesh (this is what CI runs)."""

import os

import pytest

from services.evaluation import gate
from services.evaluation.cases import load_cases
from services.evaluation.command import evaluate
from services.evaluation.followed import as_follow_ups
from services.evaluation.mailed import as_mailed
from services.evaluation.pasted import with_pasted
from services.evaluation.report import HEADLINE, build_report, write_report
from services.evaluation.stories import with_stories
from services.evaluation.together import asked_together
from services.evaluation.withheld import WITHHELD, with_gold_withheld
from shared.stubs import gateway_pb2
from tests.support.mesh import EXAMPLES, ROOT

pytestmark = pytest.mark.integration
CASES = os.path.join(ROOT, "eval", "cases", "sample.jsonl")
BASELINE = os.path.join(ROOT, "eval", "baseline.json")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def cases():
    return load_cases(CASES, [EXAMPLES])


def test_gate_passes_on_main_and_writes_a_readable_report(gateway, ingested, cases, tmp_path):
    # As `make eval-gate`: the labelled cases and each answerable one's near miss (--withhold-gold).
    asked = with_gold_withheld(cases)
    report = build_report(evaluate(gateway, asked), {"name": "sample"}, answers=True)
    assert report["overall"]["near_misses"] == sum(c.answerable for c in cases)
    assert report["degraded"] == 0  # every answer measured with the reranker, as configured
    failures = gate.compare(report["overall"], gate.load_baseline(BASELINE), HEADLINE)
    assert failures == [], failures
    out = write_report(report, str(tmp_path), threshold=0.35)
    assert (
        "| identifier |" in (out / "report.md").read_text() and "| gold withheld |" in (out / "report.md").read_text()
    )
    for name in ("recall_at_k.png", "rerank_scores.png", "latency.png"):
        data = (out / name).read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 10_000


def test_questions_told_with_a_story_are_answered_about_as_asked_plainly(gateway, ingested, cases):
    """Every labelled question told inside a story ("My manager asked me this morning and I couldn't find it.
    {question}", services/evaluation/stories.py): before shared/story.py, 0.198-0.415 of the answerable train+dev
    questions were answered right through such templates, against 0.818 asked plainly. A story must cost little
    accuracy and add (next to) no false answer."""
    _assert_near_the_baseline(gateway, with_stories(cases, seed=1), "told")


def test_questions_asked_together_are_answered_as_asked_alone(gateway, ingested, cases):
    """Every labelled question asked in one message beside another's ("1) {first} 2) {second}", one on each line;
    services/evaluation/together.py), judged on its own part of the answer: asked as one question, 3 to 41 of 60
    pairs of train/dev questions had both parts answered right, depending on the form. Each part now goes through the
    funnel alone (shared/questions.py): a partner must cost little accuracy and add (next to) no false answer."""
    _assert_near_the_baseline(gateway, asked_together(cases, seed=1), "together")


def test_questions_sent_by_mail_are_answered_about_as_asked_plainly(gateway, ingested, cases):
    """Every labelled question sent as mail and chat clients send it (a reply's quoted thread, an Outlook history, a
    signature block, a gateway's banner, a pasted subject, a Slack mention; services/evaluation/mailed.py): the code
    before shared/mail.py answered 0.263 of them right (seed 2), and refused seed 1's run outright (a four-line
    signature read as five questions, over the limit of 4). The mail must cost little accuracy and add (next to) no
    false answer."""
    _assert_near_the_baseline(gateway, as_mailed(cases, seed=1), "mailed")


def test_questions_under_a_pasted_paragraph_are_answered_about_as_asked_plainly(gateway, ingested, cases):
    """Every labelled question asked under a paragraph pasted from its gold document ("Here's what I found in the
    docs: ... {question}"; services/evaluation/pasted.py): the code before shared/asker_quotes.py answered 0.110-0.128
    of them right (seeds 1-3), 82-85% of its answers wrong and 53-55% of the unanswerable ones answered, echoing the
    paste. The paste must cost little accuracy and add (next to) no false answer."""
    _assert_near_the_baseline(gateway, with_pasted(cases, [EXAMPLES], seed=1), "pasted")


def test_questions_asked_as_chat_follow_ups_are_answered_about_as_asked_plainly(gateway, ingested, cases):
    """Every labelled question naming one table row or amount asked as the chat follow-up that swaps it in ("how
    much is the team plan", then "and business?"; services/evaluation/followed.py), as the chat door reads the
    conversation: the code before this was measured answered 0.49-0.51 of the 135 right (seeds 1-3), 13-17% of its
    answers wrong. Against the same questions asked plainly, the follow-ups must cost little accuracy and add (next
    to) no false answer."""
    followed = as_follow_ups(cases, [EXAMPLES], seed=1)
    asked_ids = {c.case_id for c in followed}
    plain = build_report(
        evaluate(gateway, [c for c in cases if c.case_id in asked_ids]), {"name": "plain"}, answers=True
    )
    overall = build_report(evaluate(gateway, followed), {"name": "followed"}, answers=True)["overall"]
    assert overall["answer_accuracy"] >= plain["overall"]["answer_accuracy"] - 0.04, overall
    assert overall["false_answer_rate"] <= plain["overall"]["false_answer_rate"] + 0.03, overall


def _assert_near_the_baseline(gateway, asked, name: str) -> None:
    """The labelled cases asked another way answer within 0.04 of the baseline's accuracy and add at most 0.03 to
    its false-answer rate."""
    baseline = gate.load_baseline(BASELINE)
    overall = build_report(evaluate(gateway, asked), {"name": name}, answers=True)["overall"]
    assert overall["answer_accuracy"] >= baseline["answer_accuracy"] - 0.04, overall
    assert overall["false_answer_rate"] <= baseline["false_answer_rate"] + 0.03, overall


def test_gate_fails_when_a_retriever_is_disabled(gateway, ingested, cases):
    # Dense-only (BM25 switched off) loses the identifier lookups. On this jargon-heavy sample set,
    # BM25-only with the reranker is on par with hybrid, so that is not the broken build used here.
    report = build_report(evaluate(gateway, cases, mode="dense"), {"name": "dense-only"}, answers=True)
    failures = gate.compare(report["overall"], gate.load_baseline(BASELINE), HEADLINE)
    assert failures, report["overall"]
    # The message says which metric and by how much.
    assert any(f.split()[0] in HEADLINE and "points worse" in f for f in failures), failures


def test_near_miss_twins_search_everything_but_their_gold_documents(gateway, ingested, cases):
    answerable = [c for c in cases if c.answerable][::40]
    twins = with_gold_withheld(answerable)[len(answerable) :]
    assert len(twins) == len(answerable)

    def candidates(case):
        request = gateway_pb2.AskRequest(tenant_id=case.tenant, question=case.question, include_candidates=True)
        request.filters.exclude_document_ids.extend(case.exclude_document_ids)
        return gateway.Ask(request, timeout=60).candidates

    top_ids = []
    for case, twin in zip(answerable, twins, strict=True):
        gold = {g.doc_id for g in case.gold}
        asked = {c.chunk.meta.document_id for c in candidates(case)}
        assert gold & asked, case.question  # found when asked plainly
        found = candidates(twin)
        assert found and not gold & {c.chunk.meta.document_id for c in found}, twin.question
        top_ids.append([c.chunk.chunk_id for c in found[:5]])
    results = evaluate(gateway, twins)
    assert [r.top_ids for r in results] == top_ids  # the runner asks each twin with its exclusion
    row = build_report(results, {"name": "near misses"}, answers=True)["per_category"][WITHHELD]
    assert row["cases"] == len(twins) and 0 <= row["near_miss_answer_rate"] <= 1 and row["false_answer_rate"] is None
