from services.evaluation.cases import load_cases
from services.evaluation.pasted import FORMS, with_pasted


def test_each_question_is_asked_under_a_paragraph_that_does_not_answer_it():
    cases = load_cases("eval/cases/sample.jsonl", ["examples"])
    pasted = with_pasted(cases, ["examples"], seed=1)
    assert [c.case_id for c in pasted] == [c.case_id for c in cases]
    assert pasted == with_pasted(cases, ["examples"], seed=1)  # the seed decides
    assert pasted != with_pasted(cases, ["examples"], seed=2)
    forms = set()
    for case, asked in zip(cases, pasted, strict=True):
        assert asked.question.endswith(case.question) and asked.gold == case.gold
        paragraph = asked.question[: -len(case.question)]
        assert len(paragraph.split()) >= 12
        assert not any(" ".join(g.evidence.split()) in paragraph for g in case.gold)
        by_opening = sorted(FORMS, key=lambda f: -len(f.split("{paragraph}")[0]))
        forms.add(next(f for f in by_opening if asked.question.startswith(f.split("{paragraph}")[0])))
    assert forms == set(FORMS)
