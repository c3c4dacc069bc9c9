"""Questions asked together with another in one message: each labelled question asked beside another labelled
question of another document, in one of a fixed set of forms ("1) {first} 2) {second}", "{first}? Also, {second}?",
one on each line), the partner, the form and which comes first chosen with a seed (`ragmesh eval --together SEED`).

Each case is judged on its own part of the answer (AskResponse.parts, shared/questions.py), or on the whole answer
when the message was answered as one question: its gold cited is right, anything else a wrong or false answer. So
a message is measured on the same cases and gold as the plain run; an unanswerable question beside an answerable
one must still be refused.
"""

import dataclasses
import random

from services.evaluation.cases import EvalCase

TEMPLATES = (
    "1) {first} 2) {second}",
    "{first}? Also, {second}?",
    "{first}\n{second}",
    "Hi team, two questions:\n1. {first}\n2. {second}\nThanks!",
    "{first}? And {second}?",
)


def asked_together(cases: list[EvalCase], seed: int) -> list[EvalCase]:
    """Every case asked in one of TEMPLATES beside a partner of the same tenant that shares no gold document with
    it (the questions' own question marks dropped, as the template places them), with the part that is its own."""
    rng = random.Random(seed)
    documents = [{g.doc_id for g in case.gold} for case in cases]
    together = []
    for i, case in enumerate(cases):
        partners = [
            other
            for j, other in enumerate(cases)
            if j != i and other.tenant == case.tenant and not documents[i] & documents[j]
        ]
        partner = rng.choice(partners)
        template = rng.choice(TEMPLATES)
        first = rng.random() < 0.5
        pair = (case, partner) if first else (partner, case)
        question = template.format(first=pair[0].question.rstrip("?"), second=pair[1].question.rstrip("?"))
        together.append(dataclasses.replace(case, question=question, part=0 if first else 1))
    return together
