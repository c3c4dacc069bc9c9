"""Questions typed in a hurry: each labelled question with one slip in one of its longer words, so robustness
to misspelling is measured on the same cases and gold as the clean run (`ragmesh eval --typos SEED`).

A slip is one of what fast typing makes: a letter dropped, two neighbours swapped, a letter replaced. It falls
inside a word of six letters or more (never its first or last letter, never an identifier), chosen with the
seed, so a run is reproducible and two seeds are two samples.
"""

import dataclasses
import random
import re

from services.evaluation.cases import EvalCase

_LONG_WORD = re.compile(r"\b[a-z]{6,}\b")
_KINDS = ("drop", "swap", "replace")


def slip(word: str, rng: random.Random) -> str:
    """The word with one slip inside it (its first and last letters kept)."""
    at = rng.randrange(1, len(word) - 2)
    kind = rng.choice(_KINDS)
    if kind == "drop":
        return word[:at] + word[at + 1 :]
    if kind == "swap" and word[at] != word[at + 1]:
        return word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    letters = [c for c in "aeioulnrst" if c != word[at]]
    return word[:at] + rng.choice(letters) + word[at + 1 :]


def with_typos(cases: list[EvalCase], seed: int) -> list[EvalCase]:
    """Every case whose question has a word of six letters or more, with one slip in one such word."""
    rng = random.Random(seed)
    out = []
    for case in cases:
        words = list(_LONG_WORD.finditer(case.question))
        if words:
            word = rng.choice(words)
            question = case.question[: word.start()] + slip(word.group(), rng) + case.question[word.end() :]
            case = dataclasses.replace(case, question=question)
        out.append(case)
    return out
