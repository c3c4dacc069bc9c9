"""The words of a question that an answer unit holds, and how much of the question they cover: a unit's own words,
its headings', a hyphenated word's parts, a clipped word written out, each question word weighted by how few units
of the context hold it."""

import math
import re

from shared.model import ScoredChunk
from shared.places import city_initials, is_city_initials
from shared.spelling import english_word
from shared.text import (
    acronyms,
    clipped_terms,
    compound_parts,
    content_terms,
    name_acronyms,
    numbers_in_digits,
    phrase_initials,
    title_and_heading_terms,
    with_number_units,
    without_addresses,
    without_message_number,
)


def term_weights(
    wanted: set[str],
    passages: list[ScoredChunk],
    spans: list[list[tuple[int, int]]],
    words: list[list[frozenset[str]]],
    written: set[str],
) -> dict[str, float]:
    """How much each of the question's words says about what it asks, from the passages it is answered from:
    log(1 + units / (1 + units holding the word)). A word most units hold ("plan", "price" among price lists) says
    little; one none holds ("plus" in "enterprise plus plan price", "latency" beside a table of edge locations)
    names what the passages may not have, so an answer without it covers less of the question."""
    unwritten = wanted - written
    held = [
        held_words(passage.chunk.body[start:end], unit_words, wanted, unwritten)
        for passage, units, passage_words in zip(passages, spans, words, strict=True)
        for (start, end), unit_words in zip(units, passage_words, strict=True)
    ]
    return {term: math.log(1 + len(held) / (1 + sum(term in terms for terms in held))) for term in wanted}


def heading_words(passage: ScoredChunk) -> set[str]:
    """The words every unit of a passage is read under: its heading path's, and what the names of its title and
    headings abbreviate to ("msa clause 7.2" under "Master Services Agreement"). A sender's address in a message's
    heading ("Message 4 from Ben Ortiz <support@...>") says who wrote it, not what it is about: it is left out."""
    names = [passage.chunk.meta.title, *passage.chunk.heading_path]
    path = without_addresses(" ".join(without_message_number(h) for h in passage.chunk.heading_path))
    return with_short_versions(content_terms(path)) | acronyms(names)


def held_words(unit: str, unit_words: frozenset[str], wanted: set[str], unwritten: set[str]) -> set[str]:
    """The words a unit holds for this question: its own, a hyphenated word's parts the question has all of
    (compound_parts), and the question's clipped words it writes out ("app" in "Application logs"), of those the
    passages never write as they are (`unwritten`): where they write "fee" or "logs", "fee" is not a clip of
    "feedback" nor "log" of "logistics"; and of those, the initials of a name it writes out ("sf" in "San
    Francisco", "mfa" in "multi-factor authentication") or that a city it names goes by ("nyc" in "New York")."""
    held = compound_parts(unit, wanted) | unit_words
    missing = wanted & unwritten
    held |= clipped_terms(missing, held)
    # A short word no passage writes may be a name they write out ("sf" and "San Francisco").
    if any(len(word) <= _ACRONYM_LETTERS and word.isalpha() for word in missing):
        held |= (name_acronyms(unit) | city_initials(unit)) & missing
        # Or of words it writes in lower case ("mfa" in "multi-factor authentication"), if no English word and
        # no city's ("nyc" names New York, whatever words a unit writes).
        abbreviations = {word for word in missing - held if not english_word(word) and not is_city_initials(word)}
        held |= phrase_initials(unit, abbreviations)
    return held


_ACRONYM_LETTERS = 5  # as `acronyms` abbreviates: a name of up to five words


def written_words(passages: list[ScoredChunk], words: list[list[frozenset[str]]]) -> set[str]:
    """Every word the passages write, in a unit, a heading or a title."""
    written = set().union(*(unit_words for passage_words in words for unit_words in passage_words))
    for passage in passages:
        written |= title_and_heading_terms(passage.chunk)
    return written


def unit_terms(unit: str) -> frozenset[str]:
    """The words a unit holds as a question reads them: its content terms, a small number of units of time in
    digits ("two months free": 2, month, free; numbers_in_digits), and a number joined to its unit word ("3-year")
    as both. Its hyphenated words read apart depend on the question (compound_parts)."""
    return frozenset(with_short_versions(with_number_units(content_terms(numbers_in_digits(unit)))))


_PATCH = re.compile(r"^v?(\d+\.\d+)\.(?:\d+|x)$")


def with_short_versions(terms: set[str]) -> set[str]:
    """The terms, and each version with a patch number also without it: release 2.1.0 is "v2.1" to a reader asking
    when v2.1 came out, and 2.1.3 (or "2.1.x") is in the 2.1 line a reader asking what 2.1 fixed means."""
    return terms | {m.group(1) for t in terms if (m := _PATCH.match(t))}


def weighted_share(covered: set[str], wanted: set[str], weights: dict[str, float]) -> float:
    """The share of the question's words, each by its weight, that an answer holds: its coverage. Summed exactly
    (fsum), so the share does not depend on the order a set yields its words in, which varies between processes."""
    total = math.fsum(weights.get(term, 0.0) for term in wanted)
    return min(1.0, math.fsum(weights.get(term, 0.0) for term in covered & wanted) / total) if total else 0.0
