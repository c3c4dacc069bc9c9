"""Questions asked as a chat follow-up: each labelled question that names one table row ("how many users come with
enterprise") or one amount ("who approves a $1000 refund") asked as the follow-up that swaps it into the question
before ("how many users come with team", then "and enterprise?"; "who approves a $3000 refund", then "and $1000?"),
the row beside it, the other amount and the follow-up's form chosen with a seed (`ragmesh eval --followed SEED`).

The case's question is what the chat door asks for that conversation (services/http/conversation.py), so the run
measures the door's reading and the funnel together, on the same gold as the plain run. Only the cases that name one
row or one amount are asked; the others are left out of the run (compare it with a plain run: `ragmesh compare`
pairs the cases both hold).
"""

import dataclasses
import random
import re

from services.evaluation.cases import EvalCase, SourceTexts
from services.http.conversation import standalone_question
from shared.quantities import amounts
from shared.text import content_terms, row_siblings

FORMS = ("and {thing}?", "what about {thing}?", "and for {thing}?", "same for {thing}")
_WORD = re.compile(r"(?<![\w.])[\w-]+(?![\w.]\w)")  # "7.2" is no word
# The other amount the question before asks about: the follow-up's times this (a $1000 refund after a $3000 one).
_OTHER_AMOUNT = (3, 0.2)
_WRITTEN_AMOUNT = re.compile(r"(\D*)([\d,.]+)(.*)")  # sign, digits, what follows ("$", "3,000", "" or "%", "k")


def as_follow_ups(cases: list[EvalCase], corpus_dirs: list[str], seed: int) -> list[EvalCase]:
    """The cases that name one table row of the corpus or one amount, each asked as the follow-up that swaps it into
    the question before, in one of FORMS."""
    rng = random.Random(seed)
    siblings = row_siblings(list(SourceTexts(corpus_dirs).texts.values()))
    out = []
    for case in cases:
        conversation = _row_swapped(case.question, siblings, rng) or _amount_swapped(case.question, rng)
        if conversation:
            out.append(dataclasses.replace(case, question=standalone_question(list(conversation))))
    return out


def _row_swapped(question: str, siblings: dict[str, set[str]], rng: random.Random) -> tuple[str, str] | None:
    # A row's name of letters ("enterprise", "p1"): a number in a question is an amount, not an exit code's row.
    named = [
        m
        for m in _WORD.finditer(question)
        if len(terms := content_terms(m.group())) == 1 and terms <= siblings.keys() and not m.group().isdigit()
    ]
    if len(named) != 1:
        return None
    word = named[0]
    (row,) = content_terms(word.group())
    other = rng.choice(sorted(siblings[row]))
    before = question[: word.start()] + other + question[word.end() :]
    return before, rng.choice(FORMS).format(thing=word.group())


def _amount_swapped(question: str, rng: random.Random) -> tuple[str, str] | None:
    found = amounts(question)
    if len(found) != 1 or not found[0].value:
        return None
    amount = found[0]
    if re.match(r"\.\d", question[amount.end :]):
        return None  # a version ("2.1.2"), not an amount
    written = question[amount.start : amount.end]
    other = amount.value * rng.choice(_OTHER_AMOUNT)
    if amount.unit == "%" and other > 100:
        other = amount.value / 2  # a share stays one
    # As the question writes it: its currency sign before, its percent sign after ("$3000", "97%"); "5k" in full.
    parts = _WRITTEN_AMOUNT.fullmatch(written)
    if parts is None:
        return None
    prefix, _, suffix = parts.groups()
    number = f"{other:,.0f}" if other >= 1 else f"{other:g}"
    before = question[: amount.start] + prefix + number + suffix.lstrip("kK") + question[amount.end :]
    return before, rng.choice(FORMS).format(thing=written)
