from rapidfuzz.distance import OSA

from services.evaluation.cases import EvalCase
from services.evaluation.typos import with_typos


def _case(question: str) -> EvalCase:
    return EvalCase(case_id=question, question=question, tenant="t", category="general", gold=[])


QUESTIONS = ["what is the refund window for annual plans", "E-4412 fix", "who approves a $3000 refund", "sla"]


def test_each_question_gets_one_slip_inside_one_longer_word_reproducibly():
    typed = with_typos([_case(q) for q in QUESTIONS], seed=7)
    assert [c.question for c in typed] == [c.question for c in with_typos([_case(q) for q in QUESTIONS], seed=7)]
    for case, original in zip(typed, QUESTIONS, strict=True):
        before, after = original.split(), case.question.split()
        changed = [(a, b) for a, b in zip(before, after, strict=True) if a != b]
        if any(len(w) >= 6 and w.isalpha() for w in before):
            assert len(changed) == 1
            word, slipped = changed[0]
            assert OSA.distance(word, slipped) == 1 and (word[0], word[-1]) == (slipped[0], slipped[-1])
        else:
            assert case.question == original  # nothing long enough to slip in
    assert [c.question for c in with_typos([_case(q) for q in QUESTIONS], seed=8)] != [c.question for c in typed]
