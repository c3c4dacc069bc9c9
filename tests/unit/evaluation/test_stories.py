from services.evaluation.cases import EvalCase
from services.evaluation.stories import TEMPLATES, with_stories
from shared.story import told_and_asked


def _case(question: str) -> EvalCase:
    return EvalCase(case_id=question, question=question, tenant="t", category="general", gold=[])


QUESTIONS = ["what is the refund window for annual plans?", "E-4412 fix", "who approves a $3000 refund", "sla"]


def test_each_question_is_told_in_a_story_reproducibly_and_read_back_from_it():
    told = with_stories([_case(q) for q in QUESTIONS], seed=3)
    assert [c.question for c in told] == [c.question for c in with_stories([_case(q) for q in QUESTIONS], seed=3)]
    assert {c.question for c in told}.isdisjoint(QUESTIONS)
    for case, original in zip(told, QUESTIONS, strict=True):
        assert any(case.question == t.format(question=original.rstrip("?")) for t in TEMPLATES)
        story, asked = told_and_asked(case.question)
        assert story and asked.rstrip("?") == original.rstrip("?")
    assert [c.question for c in with_stories([_case(q) for q in QUESTIONS], seed=4)] != [c.question for c in told]
