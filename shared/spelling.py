"""Misspelled question words, read as the passages' words they are one slip from.

Askers type fast: "wat is the refund polcy for anual plans". Dense retrieval still finds the passages, but a
misspelled word matches no word of them, so the answer's coverage of the question falls and a right answer is
refused. A question word is read as a passage word when the dictionary (simplemma's) does not know it, it has
five letters or more, and exactly one word of the passages is one edit from it (two for nine letters or more;
a swap of neighbours is one edit; two nearest words that are one word in two numbers, "hotel" and "hotels" beside
"hotell", count as one). A real word is never changed ("leave" stays "leave" beside "lease"), nor a word the
passages hold, nor one two different passage words are equally close to, nor one whose nearest passage word is the
same word in the other number, nor any word of a question most of whose longer words are unknown (another
language, or all jargon) unless each of them is such a slip ("hotell cap san fransisco").
"""

import re
from collections.abc import Iterable

import simplemma
from rapidfuzz import process
from rapidfuzz.distance import OSA

from shared.text import STOPWORDS, content_terms

_WORD = re.compile(r"[^\W\d_]+")  # letters of any script: "bogota" is one slip from "bogotá"
MIN_LETTERS = 5


def corrections(question: str, passages: Iterable[str]) -> dict[str, str]:
    """{misspelled question word: the passage word it stands for}, lower-cased."""
    long_words = {w for w in _WORD.findall(question.lower()) if len(w) >= MIN_LETTERS and w not in STOPWORDS}
    unknown = {w for w in long_words if not simplemma.is_known(w, lang="en")}
    if not unknown:  # the usual question: every word is a word, and the passages' words need not be read
        return {}
    vocabulary = {w for text in passages for w in _WORD.findall(text.lower()) if len(w) >= MIN_LETTERS - 1}
    unknown -= vocabulary
    out: dict[str, str] = {}
    for word in unknown:
        edits = 1 if len(word) < 9 else 2
        close = process.extract(word, vocabulary, scorer=OSA.distance, score_cutoff=edits, limit=None)
        best = min((distance for _, distance, _ in close), default=None)
        nearest = sorted(candidate for candidate, distance, _ in close if distance == best)
        # Nearest words that are one word in both numbers ("hotel", "hotels" beside "hotell") read as it. The same
        # word in the other number ("subprocessor" beside "subprocessors") is no slip: nothing to read.
        if nearest and len({frozenset(content_terms(c)) for c in nearest}) == 1:
            if content_terms(nearest[0]) != content_terms(word):
                out[word] = min(nearest, key=len)
    # Most words unknown (two at least): a question in another language, or all jargon, not slips ("wie lange dauert die
    # Rückerstattung" must not become "wie large ..."), unless each of them is a slip ("hotell cap san fransisco").
    if len(unknown) >= 2 and 2 * len(unknown) > len(long_words) and len(out) < len(unknown):
        return {}
    return out


def corrected(question: str, passages: Iterable[str]) -> str:
    """The question with each misspelled word replaced by the passage word it stands for (see corrections)."""
    fixes = corrections(question, passages)
    if not fixes:
        return question
    return _WORD.sub(lambda m: fixes.get(m.group().lower(), m.group()), question)
