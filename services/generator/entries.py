"""What a unit is quoted with, and the entries that answer for the thing a question names: an error code's whole
entry (meaning, cause, resolution), a numbered clause, the clause a quoted clause builds on, the list a lead-in
introduces."""

import re
from collections.abc import Iterator

from services.generator.coverage import heading_words, unit_terms
from shared.model import ScoredChunk
from shared.text import (
    identifiers,
    is_heading_line,
    is_list_item,
    is_message_header,
    is_message_heading,
    is_table_header,
    is_table_rule,
)


def with_listed_items(
    picked: list[tuple[ScoredChunk, int, int]],
    passages: list[ScoredChunk],
    spans: list[list[tuple[int, int]]],
    limit: int = 8,
) -> list[tuple[ScoredChunk, int, int]]:
    """A quoted lead-in ("These expenses are never reimbursed:") followed by its list or table: the list is what it
    says, so its items or rows (at most `limit`) are quoted after it; alone it answers nothing ("Customer is entitled
    to Service Credits as follows:" is answered by the credit table below it). A table's header and rule are not
    quoted: each row is read under its header, and only the answer's first unit brings its table (a later lead-in's
    table is quoted where its rows answer, like any row: "credit if we got 99.5%" wants one row, not three)."""
    out: list[tuple[ScoredChunk, int, int]] = []
    for position, (passage, start, end) in enumerate(picked):
        if (passage, start, end) not in out:
            out.append((passage, start, end))
        body = passage.chunk.body
        if not body[start:end].rstrip().endswith(":"):
            continue
        units = spans[rank_of(passage, passages)]
        for item_start, item_end in _introduced(body, [u for u in units if u[0] >= end], tables=position == 0)[:limit]:
            if (passage, item_start, item_end) not in out:
                out.append((passage, item_start, item_end))
    return out


def with_cited_clauses(
    picked: list[tuple[ScoredChunk, int, int]],
    passages: list[ScoredChunk],
    spans: list[list[tuple[int, int]]],
) -> list[tuple[ScoredChunk, int, int]]:
    """A quoted clause that builds on another of its passage ("the liability cap in Clause 8.1 is increased to
    two times ...") followed by that clause, which it means nothing without: "msa liability cap" quoted 8.3, which
    names the cap, and not 8.1, which sets it. Only a clause its passage holds, short enough to quote (one or two
    units)."""
    out: list[tuple[ScoredChunk, int, int]] = []
    for passage, start, end in picked:
        if (passage, start, end) not in out:
            out.append((passage, start, end))
        body = passage.chunk.body
        cited = set(_CITED_CLAUSE.findall(body[start:end]))
        if not cited:
            continue
        units = spans[rank_of(passage, passages)]
        for paragraph in _PARAGRAPH.finditer(body):
            number = _LEADING_NUMBER.match(paragraph.group())
            if not number or number.group(1) not in cited or paragraph.start() <= start < paragraph.end():
                continue
            clause = [(passage, s, e) for s, e in units if paragraph.start() <= s < paragraph.end()]
            if len(clause) <= 2:
                out += [unit for unit in clause if unit not in out]
    return out


def _introduced(body: str, following: list[tuple[int, int]], tables: bool) -> list[tuple[int, int]]:
    """The list items, or with `tables` the table's rows (its header and rule left out), that directly follow a
    lead-in."""
    table = bool(following) and body[following[0][0] : following[0][1]].startswith("|")
    if table and not tables:
        return []
    out = []
    for start, end in following:
        unit = body[start:end]
        if not (unit.startswith("|") if table else is_list_item(unit)):
            break
        if not table or not (is_table_header(body, end) or is_table_rule(unit)):
            out.append((start, end))
    return out


# A reference to a numbered clause in a clause's text: "in Clause 8.1", "under section 4.2", "§ 7.1".
_CITED_CLAUSE = re.compile(r"(?:\bclause|\bsection|§)\s*(\d+(?:\.\d+)+)\b", re.IGNORECASE)


def rank_of(passage: ScoredChunk, passages: list[ScoredChunk]) -> int:
    """The passage's place in the context, found by identity: two passages may be equal."""
    return next(rank for rank, p in enumerate(passages) if p is passage)


def entry_among(
    scored: list[tuple],
    passages: list[ScoredChunk],
    spans: list[list[tuple[int, int]]],
    named: set[str],
    max_units: int,
) -> list[tuple[ScoredChunk, int, int]]:
    """Among the passages holding a supporting unit (best unit first), the named thing's own entry: it answers
    before a sentence elsewhere that mentions the thing ("E-4421 how to fix": the manual's E-4421 entry, not a
    release note's "E-4421 fixed by re-login"). Empty when none is an entry (see named_entry)."""
    ranks: list[int] = []
    for _, rank, *_ in sorted(scored, key=lambda s: (-s[0], s[1], s[2])):
        if rank not in ranks:
            ranks.append(rank)
    return named_entry([passages[r] for r in ranks], [spans[r] for r in ranks], named, max_units)


def field_entry_names(passage: ScoredChunk, start: int, end: int) -> set[str]:
    """The identifiers of the entry a field line ("Cause: the key was rotated ...") belongs to, when the question
    named none: a field is one part of its entry, and "how do i rotate an api key" needs the entry's Resolution as
    much as the Cause line that shares its words. Empty for any other unit."""
    if not _FIELD_LINE.match(passage.chunk.body[start:end].lstrip()):
        return set()
    return _entry_names(passage)


# A labelled field of an entry: "Meaning: ...", "Cause: ...", "Resolution: ...".
_FIELD_LINE = re.compile(r"[A-Z][a-z]+:\s")


def _entry_names(passage: ScoredChunk) -> set[str]:
    """The identifiers the passage's own heading names: the things it is the entry of ("E-3001 Bucket not found").
    A message of a ticket thread ("Message 3 from Dr. Priya Nair <...>") is no entry: its number counts the thread's
    messages and names nothing a question asks about."""
    heading = passage.chunk.heading_path[-1] if passage.chunk.heading_path else ""
    return set() if is_message_heading(heading) else identifiers(heading)


def is_entry_of(passage: ScoredChunk, named: set[str]) -> bool:
    """The passage is the entry of the things the question names: its own heading names every one of them."""
    return bool(named) and named <= _entry_names(passage)


def whole_entry(
    passage: ScoredChunk, spans: list[tuple[int, int]], named: set[str], max_units: int
) -> list[tuple[ScoredChunk, int, int]]:
    """A question about a named thing ("E-3001 but the bucket definitely exists") whose best unit sits in that
    thing's own entry (a section whose heading names it, such as "E-3001 Bucket not found") short enough to quote
    whole: every unit of the entry in reading order (meaning, cause, resolution). The asker needs the entry, not
    the one line that shares most of their words. Short: no more units than an answer quotes, or no longer than
    a few sentences (_SHORT_ENTRY_CHARS), so a closing remark ("No action is blocked yet.") does not cost "got
    W-2203, how do i get more space" the entry's Resolution line. `spans` are the passage's answer units. Empty
    when that is not the case."""
    if not is_entry_of(passage, named):
        return []
    body = passage.chunk.body
    units = [
        (s, e)
        for s, e in spans
        if not is_heading_line(body[s:e], passage.chunk.heading_path) and not is_message_header(body[s:e])
    ]
    if len(units) > max_units and sum(end - start for start, end in units) > _SHORT_ENTRY_CHARS:
        return []
    return [(passage, start, end) for start, end in units]


def named_entry(
    passages: list[ScoredChunk], spans: list[list[tuple[int, int]]], named: set[str], max_units: int
) -> list[tuple[ScoredChunk, int, int]]:
    """When no unit covers the question's words, the best-ranked short entry whose heading names every identifier
    the question names ("getting E-4413 on all laptops??" under "E-4413 Sync paused by admin"): its words are the
    asker's situation, the entry is what the documents say about the thing they named. A bare number ("windows 7",
    "600 seats") names an amount or a version of something else, not an entry: then, and when there is none, empty."""
    if not named or any(term.isdigit() for term in named):
        return []
    for passage, passage_spans in zip(passages, spans, strict=True):
        entry = whole_entry(passage, passage_spans, named, max_units)
        if entry:
            return entry
    return []


# Words that name the kind of a numbered clause ("clause 10.3", "section 4.2"), not what it is about.
CLAUSE_WORDS = frozenset({"clause", "section", "article", "paragraph"})
# An entry this long or shorter is quoted whole whatever its number of units: about three sentences.
_SHORT_ENTRY_CHARS = 400
_PARAGRAPH = re.compile(r"[^\n]*\S[^\n]*(?:\n[^\n]*\S[^\n]*)*")
_LEADING_NUMBER = re.compile(r"\s*(?:clause\s+|section\s+|§\s*)?(\d+(?:\.\d+)+)[.)]?\s", re.IGNORECASE)


def numbered_clause(
    passages: list[ScoredChunk], clauses: dict[tuple[int, int], list[tuple[int, int]]], max_units: int
) -> list[tuple[ScoredChunk, int, int]]:
    """When no unit covers the question's words, the best-ranked paragraph numbered with the identifier it names
    ("10.3 Assignment. Neither party may assign ..." for "clause 10.3 can we assign the contract to our
    subsidiary"): contracts and policies number their clauses inside a section, so the clause, not the section,
    is the entry. Quoted whole when short enough. `clauses`: the question's named clauses, best-ranked first
    (named_clause_units). Empty when there is none."""
    for (rank, _), units in clauses.items():
        if len(units) <= max_units:
            return [(passages[rank], start, end) for start, end in units]
    return []


def named_clause_units(
    passages: list[ScoredChunk], spans: list[list[tuple[int, int]]], named: set[str], wanted: set[str]
) -> dict[tuple[int, int], list[tuple[int, int]]]:
    """For each unit of a clause the question names by its number (_named_clauses), by (passage rank, unit start),
    the units of that clause. Such a unit holds the kind of clause asked for ("section 4.2 of the MSA"), which a
    clause does not write, and leads to the whole clause ("what does section 10.3 say": "10.3 Assignment." is its
    heading sentence, "Neither party may assign ..." what it says)."""
    return {
        (rank, start): units for rank, units in _named_clauses(passages, spans, named, wanted) for start, _ in units
    }


def _named_clauses(
    passages: list[ScoredChunk], spans: list[list[tuple[int, int]]], named: set[str], wanted: set[str]
) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """Each paragraph numbered with an identifier the question names, best-ranked first: its passage's rank and
    the paragraph's units. The passage
    must hold one of the question's other words, if it has any, in the paragraph, its heading path or its title's
    initials: "dpa clause 9.1" is not the MSA's 9.1."""
    others = wanted - named - CLAUSE_WORDS
    for rank, (passage, passage_spans) in enumerate(zip(passages, spans, strict=True)):
        about = heading_words(passage)
        names = identifiers(" ".join([passage.chunk.meta.title, *passage.chunk.heading_path]))
        for paragraph in _PARAGRAPH.finditer(passage.chunk.body):
            number = _LEADING_NUMBER.match(paragraph.group())
            if not number or number.group(1) not in named or not named <= names | {number.group(1)}:
                continue
            if others and not others & (about | unit_terms(paragraph.group())):
                continue
            yield rank, [(s, e) for s, e in passage_spans if paragraph.start() <= s < paragraph.end()]
