"""Misspelled question words, read as the passages' words they are one slip from.

Askers type fast: "wat is the refund polcy for anual plans". Dense retrieval still finds the passages, but a
misspelled word matches no word of them, so the answer's coverage of the question falls and a right answer is
refused. A question word is read as a passage word when the dictionary (simplemma's) does not know it, it has
five letters or more, and exactly one word of the passages, or one English word whose content term the passages
hold ("apporves" is "approves", which they write "approval") or a function word ("anyhting"), is one edit from it
(two for nine letters or more; a swap of neighbours is one edit; two nearest words that are one word in two
numbers, "hotel" and "hotels" beside "hotell", count as one; a function word gives way to a word the passages
hold: "wanring" is "warning", not "wanting"). A real word is never changed ("leave" stays "leave" beside "lease"),
nor a word the passages hold, even written otherwise ("addon" beside "Add-on"), nor one two different passage
words are equally close to, nor one whose nearest passage word is the same word in the other number, nor any word
of a question most of whose longer words are unknown (another language, or all jargon) unless each of them is such
a slip ("hotell cap san fransisco").
"""

import functools
import re
from collections.abc import Iterable

import simplemma
from rapidfuzz import process
from rapidfuzz.distance import OSA
from simplemma.strategies.dictionaries import DefaultDictionaryFactory

from shared.text import STOPWORDS, content_terms

_WORD = re.compile(r"[^\W\d_]+")  # letters of any script: "bogota" is one slip from "bogotá"
MIN_LETTERS = 5


@functools.cache
def _dictionary_by_shape() -> dict[tuple[int, str, str], list[str]]:
    """The English word forms simplemma knows (lower-cased, letters only), by length, first and last letter: a slip
    is seldom at a word's ends (a swap inside it, a letter dropped or doubled), and reading only those of its shape
    keeps a lookup well under a millisecond."""
    shapes: dict[tuple[int, str, str], list[str]] = {}
    for form in DefaultDictionaryFactory().get_dictionary("en").keys():
        if form.isalpha() and form.islower() and len(form) >= MIN_LETTERS - 1:
            shapes.setdefault((len(form), form[0], form[-1]), []).append(form)
    return shapes


@functools.cache
def _english_forms() -> frozenset[str]:
    return frozenset(DefaultDictionaryFactory().get_dictionary("en").keys())


def english_word(word: str) -> bool:
    """Whether a word is an English word form simplemma knows ("pricing", "fee"; not "nwctl", "scim")."""
    return word.lower() in _english_forms()


def warm_up() -> None:
    """Load the English dictionary now, so the first question with a slip does not wait for it."""
    _dictionary_by_shape()
    _english_forms()


def _dictionary_slips(word: str, edits: int, passage_terms: set[str]) -> list[tuple[str, int, bool]]:
    """The English words `edits` or fewer from an unknown word, each with whether it may be read for it: a word
    whose content term the passages hold, or a function word ("apporves" is "approves", which the passages write as
    "approval"; "anyhting" is "anything"). A word the passages know nothing of is no reading ("navan" is not
    "naval")."""
    return [
        (candidate, distance, candidate in STOPWORDS or (bool(terms) and terms <= passage_terms))
        for candidate, distance, terms in _dictionary_near(word, edits)
    ]


@functools.lru_cache(maxsize=4096)
def _dictionary_near(word: str, edits: int) -> tuple[tuple[str, int, frozenset[str]], ...]:
    """The English words `edits` or fewer from a word, with their distances and content terms; cached, as the same
    unknown words (names, jargon) come back question after question."""
    shapes = _dictionary_by_shape()
    candidates = [
        form for n in range(len(word) - edits, len(word) + edits + 1) for form in shapes.get((n, word[0], word[-1]), ())
    ]
    return tuple(
        (candidate, int(distance), _word_terms(candidate))
        for candidate, distance, _ in process.extract(
            word, candidates, scorer=OSA.distance, score_cutoff=edits, limit=None
        )
    )


_WORD_OR_HYPHENATED = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


@functools.lru_cache(maxsize=1 << 16)
def _word_terms(word: str) -> frozenset[str]:
    """A word's content terms, cached: the passages' words, the dictionary's candidates and the question's unknown
    words are read here, most of them again question after question."""
    return frozenset(content_terms(word))


def _terms_written(tokens: set[str]) -> set[str]:
    """The content terms of the passages' words and hyphenated words (`tokens`): "approval" is approve,
    "post-incident" postincident. Read word by word, each word's terms cached: passages share most words."""
    return set().union(*(_word_terms(token) for token in tokens))


def corrections(question: str, passages: Iterable[str]) -> dict[str, str]:
    """{misspelled question word: the passage word (or the English word of a passage's word) it stands for},
    lower-cased."""
    long_words = {w for w in _WORD.findall(question.lower()) if len(w) >= MIN_LETTERS and w not in STOPWORDS}
    unknown = {w for w in long_words if not simplemma.is_known(w, lang="en")}
    if not unknown:  # the usual question: every word is a word, and the passages' words need not be read
        return {}
    tokens = {token for text in passages for token in _WORD_OR_HYPHENATED.findall(text.lower())}
    vocabulary = {w for token in tokens for w in token.split("-") if len(w) >= MIN_LETTERS - 1}
    unknown -= vocabulary
    passage_terms = _terms_written(tokens) if unknown else set()
    # A word the passages hold as a term is no slip, though they write it otherwise ("addon" and "Add-on").
    unknown = {w for w in unknown if not _word_terms(w) <= passage_terms}
    out: dict[str, str] = {}
    for word in unknown:
        edits = 1 if len(word) < 9 else 2
        close = [
            (c, d, True)
            for c, d, _ in process.extract(word, vocabulary, scorer=OSA.distance, score_cutoff=edits, limit=None)
        ]
        slips = _dictionary_slips(word, edits, passage_terms)
        close += [slip for slip in slips if slip[2]]
        best = min((distance for _, distance, _ in close), default=None)
        if best is not None and any(distance < best for _, distance, readable in slips if not readable):
            continue  # nearer to a word the passages know nothing of ("austarlian": "australian", not "australia")
        nearest = sorted({candidate for candidate, distance, _ in close if distance == best})
        # A function word ties with a word the passages hold: "wanring" is "warning", not "wanting".
        nearest = [c for c in nearest if c not in STOPWORDS] or nearest
        # Nearest words that are one word in both numbers ("hotel", "hotels" beside "hotell") read as it. The same
        # word in the other number ("subprocessor" beside "subprocessors") is no slip: nothing to read.
        if nearest and len({_word_terms(c) for c in nearest}) == 1:
            if _word_terms(nearest[0]) != _word_terms(word):
                out[word] = min(nearest, key=len)
    # Most words unknown (two at least): a question in another language, or all jargon, not slips ("wie lange dauert die
    # Rückerstattung" must not become "wie large ..."), unless each of them is a slip ("hotell cap san fransisco").
    if len(unknown) >= 2 and 2 * len(unknown) > len(long_words) and len(out) < len(unknown):
        return {}
    return out


# An identifier typed without its hyphen ("E4412", "e 4421") is the one the passages write with it ("E-4412"): a
# hyphenated name of one to three letters and three digits or more that reads the same without the hyphen.
_BARE_IDENTIFIER = re.compile(r"\b([A-Za-z]{1,3}) ?(\d{3,})\b")
_HYPHENATED_IDENTIFIER = re.compile(r"\b([A-Za-z]{1,3})-(\d{3,})\b")


def _bare_identifiers(question: str) -> list[re.Match]:
    """The question's names of letters and digits without a hyphen; not a function word before a number ("a 300
    dollar refund", "for 500 seats")."""
    return [m for m in _BARE_IDENTIFIER.finditer(question) if m.group(1).lower() not in STOPWORDS]


def _with_hyphens(question: str, bare: list[re.Match], passages: list[str]) -> str:
    """The question with each identifier typed without its hyphen (`bare`) written as the passages write it."""
    written: dict[tuple[str, str], str] = {}
    for text in passages:
        for match in _HYPHENATED_IDENTIFIER.finditer(text):
            written.setdefault((match.group(1).lower(), match.group(2)), match.group(0))
    for match in reversed(bare):  # from the end, so the earlier matches' places still hold
        hyphenated = written.get((match.group(1).lower(), match.group(2)))
        if hyphenated:
            question = question[: match.start()] + hyphenated + question[match.end() :]
    return question


# Two words typed joined by a hyphen ("per-diem") that the passages write apart ("The daily meal allowance (per
# diem) ..."): read joined, "perdiem" was a word no passage holds.
_HYPHENATED_WORD = re.compile(r"\b([A-Za-z]+)-([A-Za-z]+)\b")


def _apart(question: str, hyphenated: list[re.Match], passages: list[str]) -> str:
    """The question with each word of two joined by a hyphen (`hyphenated`) written apart, where a passage writes
    the two apart and none writes them hyphenated or as one word."""
    text = "\n".join(passages).lower()
    for match in reversed(hyphenated):
        first, second = match.group(1).lower(), match.group(2).lower()
        # A plain search first (a regex over every passage costs ~0.5 ms a word): most pairs are written neither way.
        joined = (f"{first}-{second}" in text or f"{first}{second}" in text) and re.search(
            rf"\b{first}-?{second}\b", text
        )
        if not joined and f" {second}" in text and re.search(rf"\b{first}\s+{second}\b", text):
            question = f"{question[: match.start()]}{match.group(1)} {match.group(2)}{question[match.end() :]}"
    return question


def corrected(question: str, passages: Iterable[str]) -> str:
    """The question with each misspelled word replaced by the passage word it stands for (see corrections), each
    identifier typed without its hyphen as the passages write it, and two words joined by a hyphen written apart
    where the passages write them so."""
    bare = _bare_identifiers(question)
    if bare or "-" in question:  # the passages are read only for such a question, as for one with an unknown word
        passages = list(passages)
        question = _with_hyphens(question, bare, passages) if bare else question
        hyphenated = list(_HYPHENATED_WORD.finditer(question))
        question = _apart(question, hyphenated, passages) if hyphenated else question
    fixes = corrections(question, passages)
    if not fixes:
        return question
    return _WORD.sub(lambda m: fixes.get(m.group().lower(), m.group()), question)
