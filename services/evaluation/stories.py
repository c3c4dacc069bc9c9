"""Questions told with the asker's story around them: each labelled question put in one story template of a fixed
set, chosen with a seed, so how well the funnel reads a question from inside a story ("My manager asked me this
morning and I couldn't find it. {question}") is measured on the same cases and gold as the plain run (`ragmesh eval
--stories SEED`; shared/story.py is what reads them). Unanswerable questions are told so too: a story must not
make an answer more likely than the question does.
"""

import dataclasses
import random

from services.evaluation.cases import EvalCase

TEMPLATES = (
    "My manager asked me this morning and I couldn't find it. {question}",
    "I'm new here and still learning how things work. {question}",
    "I was reading the docs last night and got confused: {question}",
    "A customer just called me about this, {question}",
    "{question}? I'm new here and still learning.",
    "{question} - asking because my manager wants to know",
    "{question} - need this for a customer",
)


def with_stories(cases: list[EvalCase], seed: int) -> list[EvalCase]:
    """Every case with its question told inside one of TEMPLATES (its own question mark dropped, as the template
    places one where it asks)."""
    return in_templates(cases, TEMPLATES, seed, keep_mark=False)


def in_templates(cases: list[EvalCase], templates: tuple[str, ...], seed: int, keep_mark: bool) -> list[EvalCase]:
    """Every case with its question put in one of the templates, chosen with the seed; without its closing
    question mark unless `keep_mark`."""
    rng = random.Random(seed)
    return [
        dataclasses.replace(
            case,
            question=rng.choice(templates).format(question=case.question if keep_mark else case.question.rstrip("?")),
        )
        for case in cases
    ]
