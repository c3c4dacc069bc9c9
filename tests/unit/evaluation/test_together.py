from services.evaluation.cases import EvalCase, Gold
from services.evaluation.runner import _own_part
from services.evaluation.together import TEMPLATES, asked_together
from shared.questions import separate_questions
from shared.stubs import common_pb2, gateway_pb2


def _case(question: str, document: str = "") -> EvalCase:
    gold = [Gold(document, "1", "evidence", 0, 8)] if document else []
    return EvalCase(case_id=question, question=question, tenant="t", category="general", gold=gold)


CASES = [
    _case("how long are invoices kept", "policies/retention"),
    _case("what is the hotel cap in london?", "policies/travel"),
    _case("who approves trips over 5000", "policies/travel"),
    _case("berlin office address"),
]


def test_each_case_is_asked_beside_a_question_of_another_document_and_is_read_back_as_its_own_part():
    together = asked_together(CASES, seed=2)
    assert [c.question for c in together] == [c.question for c in asked_together(CASES, seed=2)]
    assert [c.question for c in asked_together(CASES, seed=5)] != [c.question for c in together]
    for case, original in zip(together, CASES, strict=True):
        assert case.gold == original.gold and case.part in (0, 1)
        parts = separate_questions(case.question)
        assert len(parts) == 2, case.question
        assert parts[case.part].rstrip("?") == original.question.rstrip("?")
        partner = next(c for c in CASES if c.question.rstrip("?") == parts[1 - case.part].rstrip("?"))
        # Never a partner answered from the same document: its answer could be the case's.
        assert partner is not original and not {g.doc_id for g in partner.gold} & {g.doc_id for g in original.gold}
        pair = [original.question.rstrip("?"), partner.question.rstrip("?")][:: 1 if case.part == 0 else -1]
        assert case.question in {t.format(first=pair[0], second=pair[1]) for t in TEMPLATES}


def test_a_case_is_judged_on_its_own_part_or_on_the_whole_answer_when_the_message_was_not_parted():
    case = asked_together(CASES[:2], seed=1)[0]
    mine, other = common_pb2.Answer(text="mine"), common_pb2.Answer(text="other")
    parts = [gateway_pb2.AskPart(answer=mine), gateway_pb2.AskPart(answer=other)]
    if case.part == 1:
        parts.reverse()
    parted = gateway_pb2.AskResponse(answer=common_pb2.Answer(text="both"), parts=parts)
    assert _own_part(case, parted).answer.text == "mine"
    whole = gateway_pb2.AskResponse(answer=common_pb2.Answer(text="both"))
    assert _own_part(case, whole).answer.text == "both"
