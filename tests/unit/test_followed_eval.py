"""The labelled questions asked as chat follow-ups (services/evaluation/followed.py)."""

import random

from services.evaluation.cases import load_cases
from services.evaluation.followed import FORMS, _amount_swapped, _row_swapped, as_follow_ups
from shared.text import row_siblings


def test_each_question_naming_one_row_or_amount_is_asked_as_the_follow_up_that_swaps_it_in():
    cases = load_cases("eval/cases/sample.jsonl", ["examples"])
    followed = as_follow_ups(cases, ["examples"], seed=1)
    assert followed == as_follow_ups(cases, ["examples"], seed=1)  # the seed decides
    assert followed != as_follow_ups(cases, ["examples"], seed=2)
    by_id = {c.case_id: c for c in cases}
    assert 100 <= len(followed) < len(cases)  # the others are left out
    for asked in followed:
        case = by_id[asked.case_id]
        assert asked.gold == case.gold and asked.split == case.split
        # The chat door's reading: the question before about the swapped-in thing, or both as one in two parts.
        assert asked.question == case.question or ";" in asked.question


def test_a_row_is_swapped_for_one_beside_it_and_an_amount_for_another():
    siblings = row_siblings(["| Plan | Price |\n| --- | --- |\n| Starter | $19 |\n| Team | $79 |"])
    before, follow_up = _row_swapped("how much storage on starter", siblings, random.Random(1))
    assert before == "how much storage on team"
    assert follow_up in {form.format(thing="starter") for form in FORMS}
    before, follow_up = _amount_swapped("who approves a $1000 refund", random.Random(1))
    assert before in ("who approves a $3,000 refund", "who approves a $200 refund")
    assert "$1000" in follow_up
    assert _amount_swapped("what got fixed in 2.1.2", random.Random(1)) is None  # a version, not an amount
    assert _row_swapped("msa clause 7.2", {"2": {"1"}}, random.Random(1)) is None  # nor a number a row
