"""The extractive generator: the answer is units quoted from the passages, each with its citation.

Deterministic, and it never states anything that is not in a passage. With a trained answer selector
(services/generator/selection.py) every unit is scored and one calibrated probability decides which units
answer and whether to answer at all. Without one (RAGMESH_GENERATOR_SELECTOR_CARD=none) the original rule
applies: abstain when no unit (read under its heading path) covers enough of the question's content words.
"""

import dataclasses
import logging
import math
import re

from services.generator import reading, selection, support
from services.generator.base import empty_question
from shared.currencies import currency_terms_held, question_currencies
from shared.model import Answer, Citation, ScoredChunk
from shared.quantities import (
    Amount,
    asks_for_date,
    asks_for_duration,
    asks_for_number,
    bound_terms,
    deadline_terms,
    question_amounts,
    states_date,
    states_duration,
    states_number,
    terms_in_ranges,
)
from shared.spelling import corrected
from shared.text import (
    abbreviated_terms,
    acronyms,
    answer_units,
    cell_acronyms,
    cell_demonyms,
    chunk_words,
    clipped_terms,
    comparison_parts,
    compound_parts,
    content_terms,
    identifiers,
    is_heading_line,
    is_list_item,
    is_message_header,
    is_question,
    is_signpost,
    is_table_header,
    names_nothing,
    question_parts,
    question_terms,
    read_row,
    record_header_fields,
    table_cells,
    table_header_before,
    term_words,
    title_and_heading_terms,
    with_number_units,
)

log = logging.getLogger("ragmesh.generator")


class SelectingGenerator:
    """Answers with the units a learned selector scores highest, when the best clears its threshold."""

    def __init__(self, card_path: str, max_units: int = 3):
        self.card_path = card_path
        self.max_units = max_units
        self.card: selection.SelectorCard | None = None
        self.generator_id = "extractive-v2"

    def warm_up(self) -> None:
        self.card = selection.SelectorCard.load(self.card_path)
        self.generator_id = f"extractive-v2/{self.card.model_id}"
        log.info("answer selector %s (threshold %.4f) from %s", self.card.model_id, self.card.threshold, self.card_path)

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        wanted = content_terms(query)
        if names_nothing(wanted):
            return empty_question(self.generator_id)
        if self.card is None:
            raise RuntimeError(f"{self.card_path}: the selector is not loaded (warm_up() first)")
        card = self.card
        units = selection.candidates(query, passages)
        chosen, probability = card.decide(units, self.max_units)
        if not chosen:
            return _below_threshold(query, wanted, passages, probability, card.threshold, self.generator_id)
        picked = [(passages[units[i].passage], units[i].start, units[i].end) for i in chosen]
        return _quoted_answer(picked, self.generator_id)


class ReadingGenerator:
    """Answers with the units the support reader (a cross-encoder) finds best supported, when one calibrated
    probability over the reader's and the passages' evidence clears the card's threshold."""

    def __init__(self, card_path: str, max_units: int = 3, threads: int = 2):
        self.card_path, self.max_units, self.threads = card_path, max_units, threads
        self.card: reading.ReaderCard | None = None
        self.reader: support.SupportReader | None = None
        self.generator_id = "extractive-v3"

    def warm_up(self) -> None:
        card = reading.ReaderCard.load(self.card_path)
        folder = support.resolve(card.reader)
        if folder is None:
            raise RuntimeError(
                f"{self.card_path}: support reader {card.reader!r} is not in {support.cache_root()}; "
                "train it with `make support-reader`"
            )
        reader = support.SupportReader(folder, self.threads)
        if reader.model_id != card.reader_model_id:
            raise RuntimeError(
                f"{self.card_path} was fitted on reader {card.reader_model_id}, but {folder} holds "
                f"{reader.model_id}; refit the card with `ragmesh fit-reader-decision`"
            )
        reader.warm_up()
        self.card, self.reader = card, reader
        self.generator_id = f"extractive-v3/{card.model_id}"
        log.info("answer decision %s (threshold %.4f) over %s", card.model_id, card.threshold, reader.model_id)

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        if names_nothing(content_terms(query)):
            return empty_question(self.generator_id)
        if self.card is None or self.reader is None:
            raise RuntimeError(f"{self.card_path}: the reader is not loaded (warm_up() first)")
        units = selection.candidates(query, passages)
        scores = self.reader.score(query, [u.text for u in units])  # one batch: every unit of the context
        chosen, probability = self.card.decide(units, scores, self.max_units)
        if not chosen:
            return _below_threshold(
                query, content_terms(query), passages, probability, self.card.threshold, self.generator_id
            )
        return _quoted_answer(
            [(passages[units[i].passage], units[i].start, units[i].end) for i in chosen], self.generator_id
        )


@dataclasses.dataclass(frozen=True)
class _Asked:
    """What a question (or one part of it) asks of the unit that answers it, read once per question."""

    wanted: set[str]  # its content words
    # An identifier it names (E-4412, v2.1, clause 7.2) must be in the passage that answers it: a passage about
    # E-4413 does not answer a question about E-6001.
    named: set[str]
    amounts: list[Amount]  # the amounts it names
    # A currency it names ("price in euros") must be one the answering unit states, in any form.
    money: dict[str, set[str]]
    money_terms: set[str]
    # A question that asks for a number (a price, a count, a limit) is answered only by a unit that states one.
    number: bool
    # A dated heading answers when the question asks the date of the thing it names: "when was v2.1 released" is
    # answered by "## v2.1.0 (2025-06-01)", which every note under it is read under but none states.
    dated: bool
    unwritten: set[str]  # its words the passages never write as they are: a unit may hold them by a clip

    @classmethod
    def read(cls, query: str, written: set[str]) -> "_Asked":
        wanted = question_terms(query)
        named = identifiers(query)
        money = question_currencies(query)
        return cls(
            wanted=wanted,
            named=named,
            amounts=question_amounts(query),
            money=money,
            money_terms=set().union(*money.values()),
            number=asks_for_number(query),
            dated=bool(named) and asks_for_date(query),
            unwritten=wanted - written,
        )

    @property
    def required(self) -> set[str]:
        return self.named | self.money_terms

    def held_by(self, unit: str, unit_words: frozenset[str], row: bool) -> set[str]:
        """The question's words a unit holds by itself (not by its headings): its own words, an amount it states a
        range holding ("uptime was 99.2%" and "| 99.0% to below 99.9% | 10% |"), a bound or a time limit the
        question's "max" or "deadline" asks for, the question's currency in any form, and for a table row the
        places and bodies its cells name."""
        held = _held_words(unit, unit_words, self.wanted, self.unwritten)
        hits = (
            (held & self.wanted)
            | terms_in_ranges(self.amounts, unit)
            | bound_terms(self.wanted, unit)
            | deadline_terms(self.wanted, unit)
        )
        if self.money:  # "dollars" in "US dollars" is not the question's "australian dollars"
            hits = (hits - self.money_terms) | currency_terms_held(self.money, unit, row=row)
        if row:
            # A cell that names a place or body counts as its abbreviation and its people too ("uk" and "United
            # Kingdom", "indian" and "India").
            hits |= (cell_acronyms(unit) | cell_demonyms(unit)) & self.wanted
        return hits


@dataclasses.dataclass
class _Selection:
    """What one question (or one part of it) finds among the passages."""

    picked: list[tuple[ScoredChunk, int, int]]  # (passage, start, end) of each quoted unit, in answer order
    covered: set[str]  # the question's words the best unit holds (with its heading), and its passage around it
    seen_terms: set[str]
    # The question's words the best unit holds with its headings, and those its own text holds.
    held: set[str] = dataclasses.field(default_factory=set)
    own: set[str] = dataclasses.field(default_factory=set)


class ExtractiveGenerator:
    generator_id = "extractive-v1"

    def __init__(self, max_units: int = 3, min_coverage: float = 0.5):
        self.max_units = max_units
        # A unit supports the answer only if it (with its heading) covers this share of the question's terms.
        self.min_coverage = min_coverage

    def warm_up(self) -> None:
        pass

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        # A misspelled word ("polcy") reads as the passages' word it is one slip from ("policy").
        query = corrected(query, [chunk_words(p.chunk) for p in passages])
        wanted = question_terms(query)
        if names_nothing(wanted):
            return empty_question(self.generator_id)
        spans = [answer_units(p.chunk.body) for p in passages]  # each passage's units, by rank
        # Each unit's words, read once for the weights and every part of the question (not kept past this call:
        # the generator holds no document text between requests, so an erased document leaves nothing here).
        words = [
            [_unit_words(p.chunk.body[start:end]) for start, end in units]
            for p, units in zip(passages, spans, strict=True)
        ]
        # The words the passages write as they are, in a unit, a heading or a title: a question word among them is
        # never read as a clip of a longer one.
        written = _written_words(passages, words)
        weights = _term_weights(wanted, passages, spans, words, written)
        # A comparison ("p1 vs p2 response time") is answered side by side when each side is: one unit naming
        # both ("a post-incident review is required for every P1 and P2") answers neither.
        sides = comparison_parts(query)
        if sides:
            answered = [
                found for side in sides if (found := self._select(side, passages, spans, words, written)).picked
            ]
            if len(answered) == len(sides):
                return _answer_from_parts(answered, sides, weights, self.generator_id)
        whole = self._select(query, passages, spans, words, written)
        parts = question_parts(query)
        if whole.picked:
            quoted, covered = self._with_other_parts(whole, parts, wanted, passages, spans, words, written)
            coverage = _weighted_share(covered, wanted, weights)
            return dataclasses.replace(_quoted_answer(quoted, self.generator_id), coverage=coverage)
        # A question in parts ("api v1 shutdown date and how do i see remaining quota in v2") rarely has one unit
        # holding half its words: each part is answered on its own, and the answer quotes every part that is.
        # Its coverage is the share of the question's words the parts' best units hold, so the gateway's
        # answer decision sees an answer to half a question as one.
        if len(parts) > 1:
            answered = [
                found for part in parts if (found := self._select(part, passages, spans, words, written)).picked
            ]
            if answered:
                return _answer_from_parts(answered, parts, weights, self.generator_id)
        return Answer(
            "",
            [],
            True,
            missing=_missing(query, wanted, whole.seen_terms),
            reason="no_supporting_sentence",
            generator_id=self.generator_id,
        )

    def _with_other_parts(
        self,
        whole: _Selection,
        parts: list[str],
        wanted: set[str],
        passages: list[ScoredChunk],
        spans: list[list[tuple[int, int]]],
        words: list[list[frozenset[str]]],
        written: set[str],
    ) -> tuple[list[tuple[ScoredChunk, int, int]], set[str]]:
        """The units to quote and the words they cover. A question in parts whose best unit answers one of them
        ("trip to london: hotel cap and meal allowance" finds the hotel cap): a part whose own best unit holds words
        the quoted units do not adds its units after, so the answer quotes every part it can, and its coverage
        counts them. A word the quoted units hold only through their heading is not answered by them: under "API Rate
        Limits > Webhooks", "Failed deliveries are retried for up to 24 hours" holds "webhook rate limit" by its
        headings, and the part's own unit ("limited to 50 deliveries per second") is added."""
        picked, covered = list(whole.picked), set(whole.covered)
        held, own = set(whole.held), set(whole.own)
        if len(parts) < 2 or wanted <= own:
            return picked, covered
        for part in parts:
            found = self._select(part, passages, spans, words, written)
            if found.picked and ((found.held & wanted) - held or (found.own & wanted) - own):
                picked += [unit for unit in found.picked if unit not in picked]
                held |= found.held & wanted
                own |= found.own & wanted
                covered |= found.covered & wanted
        return picked, covered

    def _select(
        self,
        query: str,
        passages: list[ScoredChunk],
        spans: list[list[tuple[int, int]]],
        words: list[list[frozenset[str]]],
        written: set[str],
    ) -> _Selection:
        """The units that answer the question (none: no unit supports it), the words of it the best one holds,
        and the question's words seen anywhere in the passages (for an abstention's "missing")."""
        asked = _Asked.read(query, written)
        wanted, named = asked.wanted, asked.named
        scored: list[tuple[int, int, int, int, ScoredChunk]] = []  # (score, passage rank, start, end, passage)
        signposts: list[tuple[int, int, int, int, ScoredChunk]] = []
        covered_by: dict[tuple[int, int], set[str]] = {}  # (passage rank, start) of a supporting unit: its words
        own_by: dict[tuple[int, int], set[str]] = {}  # the same, less the words only its headings hold
        seen_terms: set[str] = set()
        for rank, passage in enumerate(passages):
            body = passage.chunk.body
            heading_terms = _heading_words(passage) & wanted
            # An identifier the document's title names ("Ticket 10502 - ...") is what every unit of it is about.
            heading_terms |= identifiers(passage.chunk.meta.title) & named
            header_terms: set[str] = set()
            for (start, end), unit_words in zip(spans[rank], words[rank], strict=True):
                unit = body[start:end].lstrip()
                if is_message_header(unit) or (
                    is_heading_line(unit, passage.chunk.heading_path) and not (asked.dated and states_date(unit))
                ):
                    continue  # a heading line restates the path, a message header its subject: neither answers
                record_fields = record_header_fields(unit)
                if record_fields is not None and not record_fields & wanted:
                    continue  # a ticket's record header answers only for its fields (status, plan, customer)
                row = unit.startswith("|")
                if row and is_table_header(body, end):
                    header_terms = abbreviated_terms(wanted, content_terms(unit))
                    continue
                hits = asked.held_by(unit, unit_words, row)
                if row:
                    # A table row means nothing without its header: the header's words count fully,
                    # but only for a row that matches on its own (the header is shared by every row).
                    if not hits:
                        continue
                    hits |= header_terms
                seen_terms |= hits | heading_terms
                # A unit answers under its heading: "Meaning: ..." below "E-4412 Sync conflict" is
                # about E-4412 as much as a sentence that names it. Ties go to the better-ranked passage.
                covered = hits | heading_terms
                score = len(covered)
                if asked.number and not states_number(unit):
                    continue
                if record_fields is not None and wanted - covered:
                    continue  # the header answers a question about its fields, all of it: not "what did they ask"
                if asked.required <= covered and len(covered) >= self.min_coverage * len(wanted):
                    # A signpost ("See the discounts document ...") or a question a ticket asks ("Can we get a
                    # refund?") shares the question's words, not its answer: it answers only when no other unit does.
                    (signposts if is_signpost(unit) or is_question(unit) else scored).append(
                        (score, rank, start, end, passage)
                    )
                    covered_by[(rank, start)] = covered
                    own_by[(rank, start)] = hits
        if not scored:
            entry = _named_entry(passages, spans, named, self.max_units) or _numbered_clause(
                passages, spans, named, wanted, self.max_units
            )
            if entry:
                return _Selection(entry, set(), seen_terms)  # the entry answers for the thing named, not its words
            scored = signposts
        if not scored:
            return _Selection([], set(), seen_terms)
        best = max(s[0] for s in scored)
        # Among units holding as many words, a table row named by one of them comes first, for a "how long"
        # question a unit that states a span of time ("how long do i have to submit expenses": "within 30 days",
        # not the sentence on how to submit), and for a "when" question the dated heading of what it names.
        duration = asks_for_duration(query)

        def lead_order(s: tuple[int, int, int, int, ScoredChunk]) -> tuple:
            score, rank, start, end, passage = s
            unit = passage.chunk.body[start:end]
            return (
                -score,
                not _row_named(unit, wanted),
                duration and not states_duration(unit),
                not unit.startswith("#"),  # a dated heading (the only heading let in) leads
                rank,
                start,
            )

        chosen = sorted((s for s in scored if s[0] >= 0.75 * best), key=lead_order)
        _, top_rank, top_start, top_end, top = chosen[0]
        entry = _whole_entry(top, spans[top_rank], named or _field_entry_names(top, top_start, top_end), self.max_units)
        if not entry and not _is_entry_of(top, named):  # an entry too long to quote whole keeps its best units
            # The named thing's entry answers before a sentence elsewhere that mentions it, even where the entry
            # shares fewer of the question's words ("E-4412 ... which cli command fixes it": the manual's entry, not
            # a ticket's "E-4412 conflicts stopped after ...").
            entry = _entry_among(scored, passages, spans, named, self.max_units) or _named_entry(
                passages, spans, named, self.max_units
            )
        picked = entry or [(p, start, end) for _, _, start, end, p in chosen[: self.max_units]]
        # The answer's coverage also counts the words its passage holds around the quoted unit: in "is the service
        # credit our only remedy for downtime", "remedy" is in the quoted clause and "downtime" in the sentence
        # before it. A word no unit of the passage holds ("latency" beside a table of edge locations) still counts
        # against it; a currency must be the unit's own ("dollars" elsewhere is not the question's "australian
        # dollars").
        around = ((_heading_words(top) | set().union(*words[top_rank])) & wanted) - asked.money_terms
        held = covered_by[(top_rank, top_start)]
        return _Selection(
            _with_listed_items(_with_cited_clauses(picked, passages, spans), passages, spans),
            held | around,
            seen_terms,
            held,
            own_by[(top_rank, top_start)],
        )


def _answer_from_parts(
    answered: list[_Selection], parts: list[str], weights: dict[str, float], generator_id: str
) -> Answer:
    """An answer quoting each answered part's units in the parts' order; its coverage is the share of the parts'
    words their best units hold."""
    picked: list[tuple[ScoredChunk, int, int]] = []
    for found in answered:
        picked += [unit for unit in found.picked if unit not in picked]
    asked = set().union(*(question_terms(part) for part in parts))
    coverage = _weighted_share(set().union(*(found.covered for found in answered)), asked, weights)
    return dataclasses.replace(_quoted_answer(picked, generator_id), coverage=coverage)


def _row_named(unit: str, wanted: set[str]) -> bool:
    """Whether a table row's first cell, the row's name, holds one of the question's words: a row is about what
    it is named, so for "storage on business" the Business row answers before the Team row whose support column
    says "1 business day"."""
    cells = table_cells(unit) if unit.lstrip().startswith("|") else []
    return bool(cells) and bool(content_terms(cells[0]) & wanted)


def _term_weights(
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
        _held_words(passage.chunk.body[start:end], unit_words, wanted, unwritten)
        for passage, units, passage_words in zip(passages, spans, words, strict=True)
        for (start, end), unit_words in zip(units, passage_words, strict=True)
    ]
    return {term: math.log(1 + len(held) / (1 + sum(term in terms for terms in held))) for term in wanted}


def _heading_words(passage: ScoredChunk) -> set[str]:
    """The words every unit of a passage is read under: its heading path's, and what the names of its title and
    headings abbreviate to ("msa clause 7.2" under "Master Services Agreement")."""
    names = [passage.chunk.meta.title, *passage.chunk.heading_path]
    return _with_short_versions(content_terms(" ".join(passage.chunk.heading_path))) | acronyms(names)


def _held_words(unit: str, unit_words: frozenset[str], wanted: set[str], unwritten: set[str]) -> set[str]:
    """The words a unit holds for this question: its own, a hyphenated word's parts the question has all of
    (compound_parts), and the question's clipped words it writes out ("app" in "Application logs"), of those the
    passages never write as they are (`unwritten`): where they write "fee" or "logs", "fee" is not a clip of
    "feedback" nor "log" of "logistics"."""
    held = compound_parts(unit, wanted) | unit_words
    return held | clipped_terms(wanted & unwritten, held)


def _written_words(passages: list[ScoredChunk], words: list[list[frozenset[str]]]) -> set[str]:
    """Every word the passages write, in a unit, a heading or a title."""
    written = set().union(*(unit_words for passage_words in words for unit_words in passage_words))
    for passage in passages:
        written |= title_and_heading_terms(passage.chunk)
    return written


def _unit_words(unit: str) -> frozenset[str]:
    """The words a unit holds as a question reads them: its content terms, and a number joined to its unit word
    ("3-year") as both. Its hyphenated words read apart depend on the question (compound_parts)."""
    return frozenset(_with_short_versions(with_number_units(content_terms(unit))))


_ZERO_PATCH = re.compile(r"^(\d+\.\d+)\.0$")


def _with_short_versions(terms: set[str]) -> set[str]:
    """The terms, and each version ending in ".0" also without it: release 2.1.0 is "v2.1" to a reader asking when
    v2.1 came out."""
    return terms | {m.group(1) for t in terms if (m := _ZERO_PATCH.match(t))}


def _weighted_share(covered: set[str], wanted: set[str], weights: dict[str, float]) -> float:
    """The share of the question's words, each by its weight, that an answer holds: its coverage. Summed exactly
    (fsum), so the share does not depend on the order a set yields its words in, which varies between processes."""
    total = math.fsum(weights.get(term, 0.0) for term in wanted)
    return min(1.0, math.fsum(weights.get(term, 0.0) for term in covered & wanted) / total) if total else 0.0


def _with_listed_items(
    picked: list[tuple[ScoredChunk, int, int]],
    passages: list[ScoredChunk],
    spans: list[list[tuple[int, int]]],
    limit: int = 8,
) -> list[tuple[ScoredChunk, int, int]]:
    """A quoted lead-in ("These expenses are never reimbursed:") followed by its list: the list is what it says,
    so its items (at most `limit`) are quoted after it; alone it answers nothing."""
    out: list[tuple[ScoredChunk, int, int]] = []
    for passage, start, end in picked:
        if (passage, start, end) not in out:
            out.append((passage, start, end))
        body = passage.chunk.body
        if not body[start:end].rstrip().endswith(":"):
            continue
        units = spans[next(i for i, p in enumerate(passages) if p is passage)]
        for item_start, item_end in [u for u in units if u[0] >= end][:limit]:
            if not is_list_item(body[item_start:item_end]):
                break
            if (passage, item_start, item_end) not in out:
                out.append((passage, item_start, item_end))
    return out


def _with_cited_clauses(
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
        units = spans[next(i for i, p in enumerate(passages) if p is passage)]
        for paragraph in _PARAGRAPH.finditer(body):
            number = _LEADING_NUMBER.match(paragraph.group())
            if not number or number.group(1) not in cited or paragraph.start() <= start < paragraph.end():
                continue
            clause = [(passage, s, e) for s, e in units if paragraph.start() <= s < paragraph.end()]
            if len(clause) <= 2:
                out += [unit for unit in clause if unit not in out]
    return out


# A reference to a numbered clause in a clause's text: "in Clause 8.1", "under section 4.2", "§ 7.1".
_CITED_CLAUSE = re.compile(r"(?:\bclause|\bsection|§)\s*(\d+(?:\.\d+)+)\b", re.IGNORECASE)


def _entry_among(
    scored: list[tuple],
    passages: list[ScoredChunk],
    spans: list[list[tuple[int, int]]],
    named: set[str],
    max_units: int,
) -> list[tuple[ScoredChunk, int, int]]:
    """Among the passages holding a supporting unit (best unit first), the named thing's own entry: it answers
    before a sentence elsewhere that mentions the thing ("E-4421 how to fix": the manual's E-4421 entry, not a
    release note's "E-4421 fixed by re-login"). Empty when none is an entry (see _named_entry)."""
    ranks: list[int] = []
    for _, rank, *_ in sorted(scored, key=lambda s: (-s[0], s[1], s[2])):
        if rank not in ranks:
            ranks.append(rank)
    return _named_entry([passages[r] for r in ranks], [spans[r] for r in ranks], named, max_units)


def _field_entry_names(passage: ScoredChunk, start: int, end: int) -> set[str]:
    """The identifiers of the entry a field line ("Cause: the key was rotated ...") belongs to, when the question
    named none: a field is one part of its entry, and "how do i rotate an api key" needs the entry's Resolution as
    much as the Cause line that shares its words. Empty for any other unit."""
    if not _FIELD_LINE.match(passage.chunk.body[start:end].lstrip()):
        return set()
    heading = passage.chunk.heading_path[-1] if passage.chunk.heading_path else ""
    return identifiers(heading)


# A labelled field of an entry: "Meaning: ...", "Cause: ...", "Resolution: ...".
_FIELD_LINE = re.compile(r"[A-Z][a-z]+:\s")


def _is_entry_of(passage: ScoredChunk, named: set[str]) -> bool:
    """The passage is the entry of the things the question names: its own heading names every one of them."""
    heading = passage.chunk.heading_path[-1] if passage.chunk.heading_path else ""
    return bool(named) and named <= identifiers(heading)


def _whole_entry(
    passage: ScoredChunk, spans: list[tuple[int, int]], named: set[str], max_units: int
) -> list[tuple[ScoredChunk, int, int]]:
    """A question about a named thing ("E-3001 but the bucket definitely exists") whose best unit sits in that
    thing's own entry (a section whose heading names it, such as "E-3001 Bucket not found") short enough to quote
    whole: every unit of the entry in reading order (meaning, cause, resolution). The asker needs the entry, not
    the one line that shares most of their words. Short: no more units than an answer quotes, or no longer than
    a few sentences (_SHORT_ENTRY_CHARS), so a closing remark ("No action is blocked yet.") does not cost "got
    W-2203, how do i get more space" the entry's Resolution line. `spans` are the passage's answer units. Empty
    when that is not the case."""
    if not _is_entry_of(passage, named):
        return []
    body = passage.chunk.body
    units = [(s, e) for s, e in spans if not is_heading_line(body[s:e], passage.chunk.heading_path)]
    if len(units) > max_units and sum(end - start for start, end in units) > _SHORT_ENTRY_CHARS:
        return []
    return [(passage, start, end) for start, end in units]


def _named_entry(
    passages: list[ScoredChunk], spans: list[list[tuple[int, int]]], named: set[str], max_units: int
) -> list[tuple[ScoredChunk, int, int]]:
    """When no unit covers the question's words, the best-ranked short entry whose heading names every identifier
    the question names ("getting E-4413 on all laptops??" under "E-4413 Sync paused by admin"): its words are the
    asker's situation, the entry is what the documents say about the thing they named. A bare number ("windows 7",
    "600 seats") names an amount or a version of something else, not an entry: then, and when there is none, empty."""
    if not named or any(term.isdigit() for term in named):
        return []
    for passage, passage_spans in zip(passages, spans, strict=True):
        entry = _whole_entry(passage, passage_spans, named, max_units)
        if entry:
            return entry
    return []


# Words that name the kind of a numbered clause ("clause 10.3", "section 4.2"), not what it is about.
_CLAUSE_WORDS = frozenset({"clause", "section", "article", "paragraph"})
# An entry this long or shorter is quoted whole whatever its number of units: about three sentences.
_SHORT_ENTRY_CHARS = 400
_PARAGRAPH = re.compile(r"[^\n]*\S[^\n]*(?:\n[^\n]*\S[^\n]*)*")
_LEADING_NUMBER = re.compile(r"\s*(?:clause\s+|section\s+|§\s*)?(\d+(?:\.\d+)+)[.)]?\s", re.IGNORECASE)


def _numbered_clause(
    passages: list[ScoredChunk],
    spans: list[list[tuple[int, int]]],
    named: set[str],
    wanted: set[str],
    max_units: int,
) -> list[tuple[ScoredChunk, int, int]]:
    """When no unit covers the question's words, the best-ranked paragraph numbered with the identifier it names
    ("10.3 Assignment. Neither party may assign ..." for "clause 10.3 can we assign the contract to our
    subsidiary"): contracts and policies number their clauses inside a section, so the clause, not the section,
    is the entry. Quoted whole when short enough. The passage must hold one of the question's other words, if it
    has any, in the paragraph, its heading path or its title's initials: "dpa clause 9.1" is not the MSA's 9.1.
    Empty when there is none."""
    others = wanted - named - _CLAUSE_WORDS
    for passage, passage_spans in zip(passages, spans, strict=True):
        about = _heading_words(passage)
        names = identifiers(" ".join([passage.chunk.meta.title, *passage.chunk.heading_path]))
        for paragraph in _PARAGRAPH.finditer(passage.chunk.body):
            number = _LEADING_NUMBER.match(paragraph.group())
            if not number or number.group(1) not in named or not named <= names | {number.group(1)}:
                continue
            if others and not others & (about | _unit_words(paragraph.group())):
                continue
            units = [(s, e) for s, e in passage_spans if paragraph.start() <= s < paragraph.end()]
            if 0 < len(units) <= max_units:
                return [(passage, start, end) for start, end in units]
    return []


def _below_threshold(
    query: str, wanted: set[str], passages: list[ScoredChunk], probability: float, threshold: float, generator_id: str
) -> Answer:
    """The abstention of a calibrated answer decision, naming the question's words no passage holds."""
    seen = set().union(*(content_terms(p.chunk.body + " " + " ".join(p.chunk.heading_path)) for p in passages))
    return Answer(
        "",
        [],
        True,
        missing=_missing(query, wanted, seen & wanted),
        reason=f"no_supporting_unit: p(answer) {probability:.3f} < {threshold:.3f}",
        generator_id=generator_id,
    )


def _quoted_answer(picked: list[tuple[ScoredChunk, int, int]], generator_id: str) -> Answer:
    """One line per quoted unit, each with its citation (character span into the document source)."""
    lines, citations = [], []
    for passage, start, end in picked:
        citations.append(unit_citation(passage, start, end))
        # The quote keeps the source's characters (it is verified by span); the answer reads as one line, and
        # a table row under its column names ("| Team | $79 |" means nothing without "| Plan | Monthly price |").
        quote = citations[-1].quote
        if quote.lstrip().startswith("|"):
            quote = read_row(table_header_before(passage.chunk.body, start), quote)
        elif quote.lstrip().startswith("#"):  # a dated heading ("## v2.1.0 (2025-06-01)") reads as its title
            quote = quote.lstrip().lstrip("#")
        lines.append(f"{' '.join(quote.split())} [{len(citations)}]")
    return Answer("\n".join(lines), citations, False, reason="answered", generator_id=generator_id)


def unit_citation(passage: ScoredChunk, start: int, end: int) -> Citation:
    """The citation of one answer unit (offsets into the chunk body): its character span in the document
    source and its exact text, which the gateway checks against the units of the passages it supplied."""
    chunk = passage.chunk
    return Citation(
        chunk_id=chunk.chunk_id,
        char_start=chunk.char_start + start,
        char_end=chunk.char_start + end,
        quote=chunk.body[start:end],
        document_id=chunk.meta.document_id,
        version=chunk.meta.version,
        heading_path=list(chunk.heading_path),
        title=chunk.meta.title,
    )


def _missing(query: str, wanted: set[str], seen: set[str]) -> str:
    """What the passages lack, in the question's own words (terms are lemmas: "keep" is the asker's "kept")."""
    words = term_words(query)
    absent = sorted(words.get(term, term) for term in wanted - seen)
    if not absent:
        return "no passage sentence addresses the question"
    return "the passages do not mention: " + ", ".join(absent)
