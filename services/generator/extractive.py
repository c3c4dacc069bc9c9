"""The extractive generator: the answer is units quoted from the passages, each with its citation.

Deterministic, and it never states anything that is not in a passage. The rule here (extractive-v1, the default):
abstain when no unit (read under its heading path) covers enough of the question's content words; otherwise quote
the units that cover most of it, with the entry, clause or list they belong to (entries.py), and report the share
of the question they cover (coverage.py) for the gateway's answer decision. The generators a trained model decides
for are in learned.py.
"""

import dataclasses
import functools
import re

from services.generator.base import empty_question
from services.generator.coverage import (
    heading_words,
    held_words,
    term_weights,
    unit_terms,
    weighted_share,
    written_words,
)
from services.generator.entries import (
    CLAUSE_WORDS,
    entry_among,
    field_entry_names,
    is_entry_of,
    named_clause_units,
    named_entry,
    numbered_clause,
    rank_of,
    whole_entry,
    with_cited_clauses,
    with_listed_items,
)
from services.generator.listing import enumeration, listed_terms
from services.generator.quoting import missing_words, quoted_answer
from shared import places, spelling
from shared.asker_quotes import asker_quote, asks_of_its_own, pasted_quote, quoted_passages
from shared.chatter import without_chatter
from shared.currencies import currency_terms_held, question_currencies, stated_currencies
from shared.model import Answer, ScoredChunk
from shared.places import abroad_terms, countries_named, country_terms
from shared.quantities import (
    DEADLINE_WORDS,
    Amount,
    amounts,
    asked_rate,
    asks_bounded_count,
    asks_for_count,
    asks_for_date,
    asks_for_duration,
    asks_for_frequency,
    asks_for_number,
    asks_for_version,
    asks_only_for_duration,
    asks_time_taken,
    bound_terms,
    condition_terms,
    counted_thing,
    date_terms,
    deadline_terms,
    due_date_terms,
    late_terms,
    numbers_of_another_kind,
    numbers_on_the_other_side,
    question_amounts,
    ranges,
    share_terms,
    states_anchored_span,
    states_count,
    states_date,
    states_frequency,
    states_number,
    states_rate,
    states_span,
    states_version,
    terms_bounded,
    terms_in_ranges,
    threshold_terms,
)
from shared.spelling import corrected
from shared.story import Told, kept_context, told_and_asked
from shared.text import (
    abbreviated_terms,
    address_terms,
    answer_units,
    asks_per_year,
    asks_to_apply,
    asks_way,
    asks_where,
    cell_acronyms,
    cell_demonyms,
    chunk_words,
    clipped_terms,
    comparison_parts,
    content_terms,
    excluded_terms,
    header_acronyms,
    heading_conjuncts,
    identifiers,
    is_heading_line,
    is_message_header,
    is_message_heading,
    is_polar_question,
    is_question,
    is_signpost,
    is_table_header,
    item_name,
    modifier_pairs,
    names_nothing,
    negated_kind,
    numbers_in_digits,
    opposite_terms,
    period_qualified,
    periods_named,
    question_parts,
    question_terms,
    record_header_fields,
    record_subject,
    row_siblings,
    says_annual,
    states_address,
    states_applying,
    states_way,
    status_code_terms,
    with_prefixes_joined,
    word_modifiers,
)


@dataclasses.dataclass(frozen=True)
class _Written:
    """What the passages write, read once per question: every word (in a unit, a heading or a title), and for each
    name a table gives a row ("Starter" in a price list's Plan column) the names of the other rows."""

    words: set[str]
    siblings: dict[str, set[str]]
    # The ISO codes of the currencies they state ("USD" for "$79"), read only for a question naming one.
    currencies: set[str]
    # The question's words they name qualified as the question qualifies them, in a heading, a row's first cell or
    # a list item's name: ("log", "application") for "- Application logs: 90 days." and "application logs kept".
    compounds: set[tuple[str, str]]
    # For each passage, the things each of its headings names side by side ("Internet and phone": internet; phone).
    side_by_side: list[list[list[set[str]]]]
    # For each document among them that is a record (a ticket), whom its header says it is about (record_subject).
    subjects: dict[str, set[str]] = dataclasses.field(default_factory=dict)

    def about(self, passage: ScoredChunk) -> set[str]:
        """Whom every unit of the passage's record is about (empty for a passage of no record)."""
        return self.subjects.get(passage.chunk.meta.document_id, set())


@dataclasses.dataclass(frozen=True)
class _Asked:
    """What a question (or one part of it) asks of the unit that answers it, read once per question."""

    per_year: bool  # asks for a rate by the year: "annual" holds its "year"
    wanted: set[str]  # its content words
    # Those only its story names (Told.optional): a unit holding them fits better, one holding none still answers.
    optional: set[str]
    # An identifier it names (E-4412, v2.1, clause 7.2) must be in the passage that answers it: a passage about
    # E-4413 does not answer a question about E-6001.
    named: set[str]
    amounts: list[Amount]  # the amounts it names
    # A currency it names ("price in euros") must be one the answering unit states, in any form.
    money: dict[str, set[str]]
    money_terms: set[str]
    currencies: set[str]  # those the passages state: a sentence on currency in general speaks of these only
    # A question that asks for a number (a price, a count, a limit) is answered only by a unit that states one.
    number: bool
    count: bool  # "how many", "how much": a name's digits ("REST API (v2)") state no count
    # A "how long" question: a unit stating a span of time leads (`duration`), and answers only if one does (`span`,
    # unless it asks which thing tells the span: "which header tells me how long to wait").
    duration: bool
    span: bool
    taken: bool  # "how long does a refund take": a span measured from an event is a window, not the time it takes
    # A "how often" question is answered only by a unit saying how often: "any changes deployed during the week"
    # holds "how often do on-call rotations change" by its words, "Each rotation is one week long" answers it.
    frequency: bool
    # A dated heading answers when the question asks the date of the thing it names: "when was v2.1 released" is
    # answered by "## v2.1.0 (2025-06-01)", which every note under it is read under but none states.
    dated: bool
    when: bool  # asks for a date: a unit stating one leads those that state none
    unwritten: set[str]  # its words the passages never write as they are: a unit may hold them by a clip
    # The table rows it names ("starter") and their siblings ("team", "business", "enterprise"): a unit that names a
    # sibling and not the row asked about is about the sibling ("Business plan customers who buy more than 200
    # seats" does not answer "can starter buy more seats").
    rows: set[str]
    other_rows: set[str]
    polar: bool  # answered yes or no ("is there a free trial for starter")
    happened: bool  # asks whether something was done ("did pixelmint upgrade")
    rate: tuple[str, str] | None  # the count and period of "how many days a week"
    # Each of its words with the word before it ("engineer": "data" in "data engineer hourly rate").
    modifiers: dict[str, str]
    # Those the passages write the same way, each word with its qualifiers ("log": {"application"} for "application
    # logs"): a unit naming the thing with another word ("incident logs") and none of these is about another thing
    # of the kind.
    compounds: dict[str, set[str]]
    # The phrase it asks the meaning of, as written ("downtime" in "what does downtime mean"; "" for any other
    # question), and the names it asks only the meaning of ("what is a P1"): for those a unit that says what they
    # are answers, not a mention.
    meaning: str
    defines: set[str]
    # The words it qualifies by a period ("plan": "month" in "refund on a monthly plan"), and every period it names.
    periods: dict[str, str]
    periods_named: set[str]
    countries: set[str]  # the words of the countries it names ("spain")
    bounded_count: bool  # asks the most or least number of something ("max number of api keys")
    excluded: set[str]  # what it asks about the others of ("alcohol" in "except alcohol what isnt reimbursed")
    things: str  # the thing it counts ("plan" in "how many plans are there"; "" for no count of things)
    applying: bool  # asks how or where to apply for something: only a unit about applying holds its "apply"
    where: bool  # asks where (to apply, to send): a unit writing an address leads those as good that write none
    way: bool  # asks how to do something: a unit saying how it is done leads those as good that do not
    # The kind a "which ... not" question asks for ("plan" in "which plans don't include phone support"): a table
    # row of that kind holding the thing, and stating no lack of it, is one that has it.
    negated_kind: set[str]

    @classmethod
    def read(cls, query: str, written: _Written, told: Told) -> "_Asked":
        """`told`: the story the question was told after, as far as the passages can answer to it (kept_context):
        what it names counts as the question's; the kind of question is read from the question alone."""
        meaning, by_class = _asked_meaning(query)
        excluded = excluded_terms(query)
        wanted, optional = told.joined(_asked_words(query, (meaning, by_class), excluded))
        amounts_asked = question_amounts(query) + question_amounts(told.text)
        named = identifiers(query) | (identifiers(told.text) & told.required)
        polar = is_polar_question(query)
        if polar:
            # "do we keep invoices for 10 years": a measure is what a yes/no question checks, not a name the answer
            # must hold; the invoices row stating 7 years answers it. A number naming a thing ("ISO 27001") stays.
            named -= set().union(*(a.terms for a in amounts_asked if a.kind))
        money = question_currencies(query) | question_currencies(told.text)
        rows = wanted & written.siblings.keys()
        return cls(
            per_year=asks_per_year(query),
            wanted=wanted,
            optional=optional,
            named=named,
            amounts=amounts_asked,
            money=money,
            money_terms=set().union(*money.values()),
            currencies=written.currencies,
            number=asks_for_number(query),
            count=asks_for_count(query),
            things=counted_thing(query),
            bounded_count=asks_bounded_count(query),
            duration=asks_for_duration(query),
            span=asks_only_for_duration(query),
            taken=asks_time_taken(query),
            frequency=asks_for_frequency(query),
            when=(when := asks_for_date(query)),
            dated=bool(named) and when,
            unwritten=wanted - written.words,
            rows=rows,
            other_rows=set().union(*(written.siblings[row] for row in rows)) - wanted,
            polar=polar,
            happened=bool(_ASKS_DONE.match(query)),
            rate=asked_rate(query),
            modifiers=word_modifiers(query),
            # A question in parts reads them in each part: "personal data" in "how long to export and when is
            # personal data wiped" does not bar "Customer Data available for export" from the other part.
            compounds={} if len(question_parts(query)) > 1 else _by_head(modifier_pairs(query) & written.compounds),
            meaning=meaning,
            defines=_names_defined(meaning, named, by_class),
            periods=period_qualified(query),
            periods_named=periods_named(query),
            countries=countries_named(f"{told.text} {query}") & wanted,
            excluded=excluded,
            applying="apply" in wanted and asks_to_apply(query),
            where=asks_where(query),
            way=asks_way(query),
            negated_kind=negated_kind(query),
        )

    @functools.cached_property
    def amount_terms(self) -> set[str]:
        """The words the question's measured amounts are written with, digits and unit ("6", "week" of "6 weeks");
        not a count's, whose unit word says what is counted ("20 users")."""
        return set().union(*(a.terms | {a.unit} for a in self.amounts if a.kind))

    def only_bounds(self, unit: str) -> bool:
        """Whether a unit holds one of a yes/no question's amounts only by a bound that decides it, not by a range
        holding it: "approval limit for a 15% discount?" is answered by "10% to 25% requires approval by the Sales
        Manager" before "Account Executives may give up to 10% off", which only says 15% is more."""
        if not (self.polar and self.amounts):
            return False
        found = amounts(unit)
        stated = ranges(unit, found)
        held = terms_in_ranges(self.amounts, unit, found, stated)
        return bool(terms_bounded(self.amounts, unit, found, stated) - held)

    @property
    def needed(self) -> set[str]:
        """The words an answer is judged by: all of the question's, less its story's optional ones."""
        return self.wanted - self.optional

    @property
    def required(self) -> set[str]:
        return self.named | self.money_terms

    def annual_terms(self, text: str) -> set[str]:
        """The question's "year" where it asks per year and the text (a unit, a table header) says "annual"."""
        return {"year"} if self.per_year and says_annual(text) else set()

    def held_by(self, unit: str, unit_words: frozenset[str], row: bool) -> set[str]:
        """The question's words a unit holds by itself (not by its headings): its own words, an amount it states a
        range holding ("uptime was 99.2%" and "| 99.0% to below 99.9% | 10% |"), a bound or a time limit the
        question's "max" or "deadline" asks for, the question's currency in any form, and for a table row the
        places and bodies its cells name."""
        held = held_words(unit, unit_words, self.wanted, self.unwritten)
        # The unit's amounts and ranges, read once for the checks below.
        found = amounts(unit) if self.amounts else []
        stated = ranges(unit, found) if self.amounts else []
        hits = (
            (held & self.wanted)
            - numbers_of_another_kind(self.amounts, unit, found)
            - numbers_on_the_other_side(self.amounts, unit, found, stated)
            | terms_in_ranges(self.amounts, unit, found, stated)
            | (terms_bounded(self.amounts, unit, found, stated) if self.polar else set())
            | bound_terms(self.wanted, unit, counts_only=self.bounded_count)
            | deadline_terms(self.wanted, unit)
            | threshold_terms(self.wanted, unit)
            | late_terms(self.wanted, unit)
            | date_terms(self.wanted, unit)
            | due_date_terms(self.wanted, unit)
            | condition_terms(self.wanted, unit)
            | share_terms(self.wanted, unit)
            | address_terms(self.wanted, unit)
            | status_code_terms(self.wanted, unit)
            | country_terms(self.countries, unit)
            | abroad_terms(self.wanted, unit)
            | (_FIX_WORDS & self.wanted if _FIX_FIELD.match(unit) else set())
            | (opposite_terms(self.wanted, unit) if self.polar else set())
            | self.annual_terms(unit)
        )
        if self.applying:  # "the normal price applies" is not where to apply
            hits = (hits - {"apply"}) | ({"apply"} if states_applying(unit) else set())
        if self.money:  # "dollars" in "US dollars" is not the question's "australian dollars"
            hits = (hits - self.money_terms) | currency_terms_held(self.money, unit, row=row, known=self.currencies)
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
        spelling.warm_up()  # the English dictionary a slip is read against (~0.25 s), loaded before the first question
        places.warm_up()  # the cities that go by initials (~0.4 s)

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        # A misspelled word ("polcy") reads as the passages' word it is one slip from ("policy"); a greeting, a
        # sign-off and phrases of asking ("Hello, could you please let me know ...? Thanks!") are not the question.
        query = without_chatter(query)
        query, passages = _read_past_quote(query, passages)
        query = numbers_in_digits(with_prefixes_joined(corrected(query, [chunk_words(p.chunk) for p in passages])))
        # "I'm staying in SF next week, what's the hotel cap?": read from where it asks; the story is kept below
        # as far as the passages can answer to it.
        story, query = told_and_asked(query)
        wanted = _asked_words(query)
        if names_nothing(wanted):
            return empty_question(self.generator_id)
        spans = [answer_units(p.chunk.body) for p in passages]  # each passage's units, by rank
        # "what add-ons are there": the list or table a passage names for the kind is the answer, all of it.
        enumerated = enumeration(passages, spans, listed_terms(query))
        if enumerated:
            return dataclasses.replace(quoted_answer(enumerated, self.generator_id), coverage=1.0)
        # Each unit's words, read once for the weights and every part of the question (not kept past this call:
        # the generator holds no document text between requests, so an erased document leaves nothing here).
        words = [
            [unit_terms(p.chunk.body[start:end]) for start, end in units]
            for p, units in zip(passages, spans, strict=True)
        ]
        # The words the passages write as they are, in a unit, a heading or a title (a question word among them is
        # never read as a clip of a longer one), the rows their tables set side by side, and the currencies they
        # state, with those of a question naming two, which asks how they meet even where its parts name one each
        # ("paid in EUR, will my refund come back in dollars").
        bodies = [p.chunk.body for p in passages]
        siblings = row_siblings(bodies)
        # "how much is the team plan; business?" (a chat follow-up composed with the question before it) asks how
        # much the business plan is, where the tables set Business beside Team.
        query, wanted = _follow_up_swapped(query, siblings, wanted)
        named_money = set(question_currencies(f"{story} {query}"))
        stated_money = (
            set().union(*(stated_currencies(body, generic=False) for body in bodies)) if named_money else set()
        )
        asked_pairs = modifier_pairs(query)
        written = _Written(
            written_words(passages, words),
            siblings,
            stated_money | (named_money if len(named_money) > 1 else set()),
            _named_kinds(passages, spans, words, asked_pairs) if asked_pairs else set(),
            [_side_by_side(p) for p in passages],
            _record_subjects(passages, spans),
        )
        told = kept_context(story, written.words) if story else Told()
        wanted, optional = told.joined(wanted)
        weights = term_weights(wanted, passages, spans, words, written.words)
        # A comparison ("p1 vs p2 response time") is answered side by side when each side is: one unit naming
        # both ("a post-incident review is required for every P1 and P2") answers neither.
        sides = comparison_parts(query)
        if sides:
            answered = [
                found for side in sides if (found := self._select(side, passages, spans, words, written, told)).picked
            ]
            if len(answered) == len(sides):
                return _answer_from_parts(answered, sides, weights, self.generator_id, told)
        whole = self._select(query, passages, spans, words, written, told)
        parts = question_parts(query)
        if whole.picked:
            quoted, covered = self._with_other_parts(whole, parts, wanted, passages, spans, words, written, told)
            coverage = weighted_share(covered, wanted - optional, weights)  # the story's words break ties only
            # A "when" or "which version" answer reads its unit under the heading that dates it.
            asked = states_date if asks_for_date(query) else states_version if asks_for_version(query) else None
            return dataclasses.replace(quoted_answer(quoted, self.generator_id, asked), coverage=coverage)
        # A question in parts ("api v1 shutdown date and how do i see remaining quota in v2") rarely has one unit
        # holding half its words: each part is answered on its own, and the answer quotes every part that is.
        # Its coverage is the share of the question's words the parts' best units hold, so the gateway's
        # answer decision sees an answer to half a question as one.
        if len(parts) > 1:
            answered = [
                found for part in parts if (found := self._select(part, passages, spans, words, written, told)).picked
            ]
            if answered:
                return _answer_from_parts(answered, parts, weights, self.generator_id, told)
        return Answer(
            "",
            [],
            True,
            missing=missing_words(query, wanted, whole.seen_terms),
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
        written: _Written,
        told: Told,
    ) -> tuple[list[tuple[ScoredChunk, int, int]], set[str]]:
        """The units to quote and the words they cover. A question in parts whose best unit answers one of them
        ("trip to london: hotel cap and meal allowance" finds the hotel cap): a part whose own best unit holds words
        the quoted units do not adds its units after, so the answer quotes every part it can, and its coverage
        counts them. A word the quoted units hold only through their heading is not answered by them: under "API Rate
        Limits > Webhooks", "Failed deliveries are retried for up to 24 hours" holds "webhook rate limit" by its
        headings, and the part's own unit ("limited to 50 deliveries per second") is added."""
        picked, covered = list(whole.picked), set(whole.covered)
        held, own = set(whole.held), set(whole.own)
        if len(parts) < 2 or wanted - told.optional <= own:
            return picked, covered
        for part in parts:
            found = self._select(part, passages, spans, words, written, told)
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
        written: _Written,
        told: Told,
    ) -> _Selection:
        """The units that answer the question (none: no unit supports it), the words of it the best one holds,
        and the question's words seen anywhere in the passages (for an abstention's "missing")."""
        asked = _Asked.read(query, written, told)
        wanted, named = asked.wanted, asked.named
        names = {term for term in named if any(ch.isalpha() for ch in term)}  # a sentence running on holds these
        scored: list[tuple[int, int, int, int, ScoredChunk]] = []  # (score, passage rank, start, end, passage)
        signposts: list[tuple[int, int, int, int, ScoredChunk]] = []
        covered_by: dict[tuple[int, int], set[str]] = {}  # (passage rank, start) of a supporting unit: its words
        own_by: dict[tuple[int, int], set[str]] = {}  # the same, less the words only its headings hold
        scoped: set[tuple[int, int]] = set()  # units saying the row a yes/no question names is left out
        seen_terms: set[str] = set()
        clause_kind = CLAUSE_WORDS & wanted
        clauses = named_clause_units(passages, spans, named, wanted) if named else {}
        for rank, passage in enumerate(passages):
            body = passage.chunk.body
            heading = heading_words(passage)
            # A clipped word the passages never write is held by the heading that writes it out: "env var" by
            # "Environment variables", as it is by a unit's own words (held_words).
            heading_terms = (heading & wanted) | clipped_terms(asked.unwritten, heading)
            # An identifier the document's title names ("Ticket 10502 - ...") is what every unit of it is about.
            heading_terms |= identifiers(passage.chunk.meta.title) & named
            # So is the customer a ticket's record header names ("Customer: Brightside Dental Group").
            heading_terms |= written.about(passage) & wanted
            header_terms: set[str] = set()
            header = ""  # the table header the rows below it are read under
            side_by_side = written.side_by_side[rank]
            # A section headed by a question (a FAQ's "Can I claim expenses paid in another currency?"): a unit
            # holding none of our question's words by itself answers the heading's question, not ours, unless the
            # heading asks all of ours.
            asked_above = bool(passage.chunk.heading_path) and is_question(passage.chunk.heading_path[-1])
            # A sentence that runs on from the one before it on the same line is about the identifiers that one names
            # ("Measured platform availability for Q2 2025 was 99.97%. The EU region reached 99.95%." answers "eu
            # region availability in Q2"); only the sentence just before, only what it names itself, and only names
            # (with a letter: a bare number is an amount, which the sentence must state itself, as a 5% fee does not
            # state "within 5 days").
            named_before: set[str] = set()
            end_before = 0
            for (start, end), unit_words in zip(spans[rank], words[rank], strict=True):
                unit = body[start:end].lstrip()
                runs_on = named_before if start and "\n" not in body[end_before:start] else set()
                named_before = identifiers(unit) & names if names else set()
                end_before = end
                record_fields = record_header_fields(unit)
                if _restates(unit, passage, record_fields, asked):
                    # It does not answer, but it mentions: an abstention must not say the passages lack its words.
                    seen_terms |= asked.held_by(unit, unit_words, False) | heading_terms
                    continue
                row = unit.startswith("|")
                if row and is_table_header(body, end):
                    header_terms = abbreviated_terms(wanted, content_terms(unit)) | (header_acronyms(unit) & wanted)
                    header = unit
                    header_terms |= asked.annual_terms(unit)
                    seen_terms |= header_terms
                    continue
                hits = asked.held_by(unit, unit_words, row)
                if (rank, start) in clauses:
                    hits |= clause_kind
                if row:
                    # A table row means nothing without its header: the header's words count fully,
                    # but only for a row that matches on its own (the header is shared by every row).
                    if not hits:
                        continue
                    hits |= header_terms
                seen_terms |= hits | heading_terms
                # A unit answers under its heading: "Meaning: ..." below "E-4412 Sync conflict" is
                # about E-4412 as much as a sentence that names it. Ties go to the better-ranked passage.
                covered = hits | heading_terms | runs_on
                score = len(covered - asked.optional)  # the story's words only break ties (lead_order)
                name = _row_name(unit) if row else []  # a row's first cell, read once for the checks below
                if _answers_something_else(unit, row, name, unit_words, covered, record_fields, passage, asked):
                    continue
                if row and asked.negated_kind and _has_what_is_denied(unit, header, asked.negated_kind):
                    continue  # "which plans don't include phone support": the Enterprise row, "24/7 phone", has it
                if asked.rate and not states_rate(f"{header} {unit}" if row else unit, asked.rate):
                    continue  # "how many days a week": "30 days per calendar year" counts by the year
                if side_by_side and _about_another_of_heading(unit_words, side_by_side, wanted):
                    continue
                if covered and covered <= asked.amount_terms:
                    continue  # holds nothing but the amount: "flights of 6 hours or longer" for "spain for 6 weeks"
                if not hits and (
                    (asked_above and not asked.needed <= covered)
                    or (not asked_above and len(unit.split()) < _MIN_WORDS)
                    or (not asked.polar and _YES_OR_NO.fullmatch(unit))
                ):
                    # "Yes." under "Can I claim expenses paid in another currency?" answers that question (and one
                    # asked as yes or no with all its words, not "what currency should i claim in"), and "Attached."
                    # or "Thanks." in a ticket holds its number by the title and says nothing of it.
                    continue
                # A sentence stating a scope answers for the row it leaves out, named or not ("do P3s need a PIR").
                if _states_scope(row, unit_words, covered, asked, name):
                    covered |= asked.rows
                    scoped.add((rank, start))
                    score = len(covered - asked.optional)
                if asked.required <= covered and score >= self.min_coverage * len(asked.needed):
                    # A signpost ("See the discounts document ...") or a question a ticket asks ("Can we get a
                    # refund?") shares the question's words, not its answer: it answers only when no other unit does.
                    (signposts if is_signpost(unit) or is_question(unit) else scored).append(
                        (score, rank, start, end, passage)
                    )
                    covered_by[(rank, start)] = covered
                    own_by[(rank, start)] = hits
        if not scored:
            entry = named_entry(passages, spans, named, self.max_units) or numbered_clause(
                passages, clauses, self.max_units
            )
            if entry:
                return _Selection(entry, set(), seen_terms)  # the entry answers for the thing named, not its words
            scored = signposts
        if not scored:
            return _Selection([], set(), seen_terms)
        best = max(s[0] for s in scored)
        # A question every unit answers only by its document's title or headings names the document, not anything in
        # it ("what was ticket 10231 about"): its units are read in the document's order, from its beginning.
        in_order = _by_position(scored, own_by)
        # Among units holding as many words, a table row named by one of them comes first, for a "how long"
        # question a unit that states a span of time ("how long do i have to submit expenses": "within 30 days",
        # not the sentence on how to submit) or the event that ends it ("continues until ..."), for a deadline
        # question the unit stating the time limit, and for a "when" question the dated heading of what it names.
        deadline = DEADLINE_WORDS & wanted
        near_best = [s for s in scored if s[0] >= 0.75 * best]
        # A yes/no question's amount a unit holds only by a bound deciding it (Asked.only_bounds), read once a unit:
        # the ordering below reads each unit twice.
        only_bounds = {
            (rank, start) for _, rank, start, end, p in near_best if asked.only_bounds(p.chunk.body[start:end])
        }

        def lead_order(s: tuple[int, int, int, int, ScoredChunk], for_lead: bool = False) -> tuple:
            score, rank, start, end, passage = s
            unit = passage.chunk.body[start:end]
            return (
                # "when does the 2026 refund policy apply": a unit that states a date ("... on or after January 1,
                # 2026") leads those that hold more of the question's words but date nothing.
                asked.when and not states_date(unit),
                # "other than invoices what do we keep 7 years": the audit logs' 7 years before the invoices row.
                bool(asked.excluded) and bool(asked.excluded & unit_terms(unit)),
                -score,
                # "we're on starter, can we get phone support": of units holding as much of the question, the one
                # holding more of its story ("Starter").
                -len(covered_by[(rank, start)] & asked.optional),
                (rank, start) in only_bounds,
                # "where to apply for startup pricing": "Applications go through startups@..." before "After 12
                # months, the normal price applies", which holds as many of its words.
                asked.where and not states_address(unit),
                # "how do i get a refund": "Refund requests must be submitted through the billing portal" before the
                # policy's other sentences holding "refund".
                asked.way and not states_way(unit),
                # "what is a p4": the unit that says what it is, before the table row named for it.
                bool(asked.meaning)
                and not any(_opens_with_definition(unit, name) for name in (asked.meaning, *asked.defines)),
                # "how much notice for scheduled maintenance": the clause defining "Scheduled Maintenance" before
                # the one defining "Downtime" that mentions it.
                not _defines_asked(unit, wanted),
                # "does starter include sso": "Advanced SSO ... | Team, Business |" says no, before the Starter row
                # that holds "include" by its header's "Seats included".
                (rank, start) not in scoped,
                not _row_named(_row_name(unit), wanted),
                # "can i pay in yen": the unit stating the yen ("| Japan | JPY | ... | Card, bank transfer |")
                # before one about currency in general ("Expensify converts foreign-currency receipts ...").
                bool(asked.money) and not asked.money.keys() <= stated_currencies(unit, generic=False),
                asked.duration and not states_span(unit),
                asked.taken and states_anchored_span(unit),
                bool(deadline) and not deadline & covered_by[(rank, start)],
                not unit.startswith("#"),  # a dated heading (the only heading let in) leads
                # A ticket's reply restates a policy for one customer at one time ("inside the 30-day window of our
                # 2025 refund policy"); the document states it, so it leads. Further units keep their order.
                for_lead and _from_thread(passage, spans[rank]),
                *(
                    (in_order[passage.chunk.meta.document_id], passage.chunk.char_start + start)
                    if in_order
                    else (rank, start)
                ),
            )

        chosen = sorted(near_best, key=lead_order)
        lead = min(chosen, key=lambda s: lead_order(s, for_lead=True))
        chosen = [lead, *(s for s in chosen if s is not lead and not _far_below(s[4], lead[4]))]
        _, top_rank, top_start, top_end, top = chosen[0]
        entry = whole_entry(top, spans[top_rank], named or field_entry_names(top, top_start, top_end), self.max_units)
        clause = clauses.get((top_rank, top_start), [])
        if not entry and 0 < len(clause) <= self.max_units:
            entry = [(top, start, end) for start, end in clause]  # the clause asked for, whole
        if not entry and not is_entry_of(top, named):  # an entry too long to quote whole keeps its best units
            # The named thing's entry answers before a sentence elsewhere that mentions it, even where the entry
            # shares fewer of the question's words ("E-4412 ... which cli command fixes it": the manual's entry, not
            # a ticket's "E-4412 conflicts stopped after ..."), unless the question is yes/no and that sentence holds
            # every word of it by itself ("does W-2204 show on enterprise": "The dashboard no longer shows W-2204 to
            # workspaces on the Enterprise plan", not the entry's "Meaning: the workspace has one seat left").
            entry = entry_among(scored, passages, spans, named, self.max_units)
            if not entry and not (asked.polar and asked.needed <= own_by[(top_rank, top_start)]):
                entry = named_entry(passages, spans, named, self.max_units)
        picked = entry or [(p, start, end) for _, _, start, end, p in chosen[: self.max_units]]
        # The answer's coverage also counts the words its passage holds around the quoted unit: in "is the service
        # credit our only remedy for downtime", "remedy" is in the quoted clause and "downtime" in the sentence
        # before it. A word no unit of the passage holds ("latency" beside a table of edge locations) still counts
        # against it; a currency must be the unit's own ("dollars" elsewhere is not the question's "australian
        # dollars").
        around = (
            (heading_words(top) | written.about(top) | set().union(*words[top_rank])) & wanted
        ) - asked.money_terms
        held, own = covered_by[(top_rank, top_start)], own_by[(top_rank, top_start)]
        if entry and not any(p is top and start == top_start for p, start, _ in entry):
            # The named thing's entry is quoted instead of the best unit: the answer holds the words of what it quotes,
            # so a part of the question that unit answered is still added ("E-1010 ... cause and where to upload the
            # new one": the ticket's "... the new one needs to be uploaded under Settings > SSO" after the entry).
            quoted = [key for p, start, _ in entry if (key := (rank_of(p, passages), start)) in covered_by]
            if quoted:
                held = set().union(*(covered_by[key] for key in quoted))
                own = set().union(*(own_by[key] for key in quoted))
        return _Selection(
            with_listed_items(with_cited_clauses(picked, passages, spans), passages, spans),
            held | around,
            seen_terms,
            held,
            own,
        )


# A question whether something was done: "did pixelmint upgrade", "Did they get a credit?".
_ASKS_DONE = re.compile(r"^\W*did\b", re.IGNORECASE)
# A unit opening with a verb: a list item's or a sentence's first word ("2. Upgrade to Team", "Reduce to 2 workers").
_OPENING_WORD = re.compile(r"^[\s\-*•]*(?:\d+[.)]\s+)?([A-Za-z]+)\b")


def _instructs(unit: str, wanted: set[str]) -> bool:
    """Whether a unit tells the reader to do what the question asks was done: it opens with the question's verb in
    its bare form ("Upgrade to Team" for "did pixelmint upgrade")."""
    match = _OPENING_WORD.match(unit)
    word = match.group(1).lower() if match else ""
    return word in wanted and content_terms(word) == {word}


def _record_subjects(passages: list[ScoredChunk], spans: list[list[tuple[int, int]]]) -> dict[str, set[str]]:
    """For each record (ticket) among the passages whose header is among them too, whom the header says it is
    about: "what warning did brightside ignore" asks about Brightside Dental Group's ticket, whose messages never
    write the name."""
    subjects: dict[str, set[str]] = {}
    for passage, units in zip(passages, spans, strict=True):
        # A record's header opens its first chunk.
        if units and (subject := record_subject(passage.chunk.body[units[0][0] : units[0][1]])):
            subjects.setdefault(passage.chunk.meta.document_id, set()).update(subject)
    return subjects


def _side_by_side(passage: ScoredChunk) -> list[list[set[str]]]:
    """For each heading of a passage naming things side by side ("Internet and phone"), the terms of each."""
    return [conjuncts for heading in passage.chunk.heading_path if (conjuncts := heading_conjuncts(heading))]


def _named_kinds(
    passages: list[ScoredChunk],
    spans: list[list[tuple[int, int]]],
    words: list[list[frozenset[str]]],
    asked: set[tuple[str, str]],
) -> set[tuple[str, str]]:
    """The question's qualified words (modifier_pairs) that the passages write as a name: a heading, a table row's
    first cell, a list item's name ("Application logs: 90 days" beside "Audit logs: 1 year"). A document naming
    kinds of a thing this way tells them apart, so a unit naming another kind is about that one."""
    names = [name for p in passages for name in p.chunk.heading_path]
    heads = {term for term, _ in asked}
    names += [
        item_name(p.chunk.body[start:end])
        for p, units, unit_words in zip(passages, spans, words, strict=True)
        for (start, end), held in zip(units, unit_words, strict=True)
        if heads & held  # read only the units that write a word the question qualifies
    ]
    return set().union(*(modifier_pairs(name) & asked for name in names if name))


# The fewest words a unit holding none of the question's words by itself says something in ("Attached." does not).
_MIN_WORDS = 3
# A unit that only says yes or no, answering the question above it.
_YES_OR_NO = re.compile(r"\s*(?:yes|no)\W*", re.IGNORECASE)
# A "Resolution:" (or "Fix:", "Workaround:") field says how a thing is fixed: it holds the question's word for that
# ("how do i fix a sync conflict": E-4412's "Resolution: open the file history, ..." under "E-4412 Sync conflict").
_FIX_FIELD = re.compile(r"\s*(?:resolution|fix|workaround)\s*:", re.IGNORECASE)
_FIX_WORDS = frozenset({"fix", "resolve", "solve", "solution", "workaround"})
# A further unit from another document whose passage the reranker scored this far below the lead's shares the
# question's words, not its subject ("how long do we keep invoices": an error code's "Meaning: an invoice is more than
# 30 days past due" beside the retention row). Chosen on the train and dev replays (0.05 also dropped units that help),
# on maxsim's cosines; a cross-encoder's scores are probabilities, and passthrough's fused scores never differ so much.
_FURTHER_SCORE_GAP = 0.1


def _by_position(
    scored: list[tuple[int, int, int, int, ScoredChunk]], own_by: dict[tuple[int, int], set[str]]
) -> dict[str, int]:
    """For units none of which holds a word of the question by itself, each document's best passage rank (its
    units are then read in the document's order); empty where one does."""
    if any(own_by[(rank, start)] for _, rank, start, _, _ in scored):
        return {}
    ranks: dict[str, int] = {}
    for _, rank, _, _, passage in scored:
        doc = passage.chunk.meta.document_id
        ranks[doc] = min(rank, ranks.get(doc, rank))
    return ranks


# A follow-up's opening words before the table row it names ("for business?").
_FOLLOW_UP_OPENING = re.compile(r"^\s*(?:(?:and|for|on|with|the|what\s+about|how\s+about)\s+)*", re.IGNORECASE)


def _follow_up_swapped(query: str, siblings: dict[str, set[str]], wanted: set[str]) -> tuple[str, set[str]]:
    """A question composed with a follow-up after a ";" ("how much is the team plan; business?", services/http/
    conversation.py) as the first part about the rows the follow-up names, where those are all it names and the
    first part names one row beside them in a table ("team" beside "business"); and its words. Otherwise the
    query and `wanted` as they came."""
    first, mark, then = query.partition(";")
    added = _asked_words(then) if mark else set()
    if not added or not added <= siblings.keys():
        return query, wanted
    swapped = {row for row in _asked_words(first) & siblings.keys() if siblings[row] & added and row not in added}
    if len(swapped) != 1:
        return query, wanted
    row = swapped.pop()
    words = list(re.finditer(r"[\w-]+", first))
    at = [m for m in words if content_terms(m.group()) == {row}]
    if len(at) != 1:
        return query, wanted
    replacement = _FOLLOW_UP_OPENING.sub("", then).strip(" ?.!")
    asked = first[: at[0].start()] + replacement + first[at[0].end() :]
    return asked, _asked_words(asked)


def _far_below(passage: ScoredChunk, lead: ScoredChunk) -> bool:
    """Whether a unit of this passage is too far from the lead's to quote beside it (see _FURTHER_SCORE_GAP)."""
    return (
        passage.chunk.meta.document_id != lead.chunk.meta.document_id
        and passage.scores.rerank_score < lead.scores.rerank_score - _FURTHER_SCORE_GAP
    )


def _from_thread(passage: ScoredChunk, units: list[tuple[int, int]]) -> bool:
    """Whether a passage is part of a message thread (a ticket, an e-mail): a message's section, or a passage
    holding a message's header lines."""
    body = passage.chunk.body
    return any(is_message_heading(h) for h in passage.chunk.heading_path) or any(
        is_message_header(body[start:end].lstrip()) for start, end in units
    )


def _restates(unit: str, passage: ScoredChunk, record_fields: set[str] | None, asked: _Asked) -> bool:
    """Whether a unit only restates what its reader already has: a heading line restates the path (unless it dates
    what a "when" question names), a message header its subject, and a ticket's record header answers only for its
    fields (status, plan, customer)."""
    if is_message_header(unit) or (
        is_heading_line(unit, passage.chunk.heading_path) and not (asked.dated and states_date(unit))
    ):
        return True
    return record_fields is not None and not record_fields & asked.wanted


# A table cell stating that a row lacks something: "| Team | No phone support |", "| Starter | none |", "| - |".
_LACK = re.compile(r"\|\s*(?:no|not|none|never|n/a)\b[^|]*\||\|\s*[-—]\s*\|", re.IGNORECASE)


def _has_what_is_denied(row: str, header: str, kind: set[str]) -> bool:
    """Whether a table row is one of the kind a "which ... not" question asks for (its table's first column names
    the kind) and states no lack: a row holding the question's thing is then one that has it."""
    first_column = content_terms(header.strip().strip("|").split("|", 1)[0])
    return kind <= first_column and not _LACK.search(row)


def _answers_something_else(
    unit: str,
    row: bool,
    name: list[str],
    unit_words: frozenset[str],
    covered: set[str],
    record_fields: set[str] | None,
    passage: ScoredChunk,
    asked: _Asked,
) -> bool:
    """Whether a unit holding the question's words answers another question than the one asked. `name`: a row's
    first cell's words (_row_name), empty for a unit that is not a row."""
    if asked.happened and _instructs(unit, asked.wanted):
        return True  # "did pixelmint upgrade": "2. Upgrade to Team, ..." offers it, it does not say it was done
    if asked.number and not states_number(unit, asked.wanted, names_count=not asked.count):
        return True  # the question asks for a number and the unit states none
    if asked.things and not states_count(unit, asked.things):
        return True  # "how many plans are there": "Annual plans cancelled within the 14-day window" counts days
    if asked.span and not states_span(unit):
        return True  # "how long": a unit that states no span of time, by its length or its end, does not say
    if asked.frequency and not states_frequency(unit):
        return True  # "how often": a unit stating no period, no count of times and no span does not say
    if _about_other_row(row, name, unit_words, covered, asked):
        return True  # about another row of the table ("Business" where "Starter" is asked)
    if asked.defines and not (
        is_entry_of(passage, asked.defines) or _row_named(name, asked.defines) or _defines(unit, asked.defines)
    ):
        return True  # "what is a P1": a sentence that only mentions a P1 outage does not say
    if row and _names_another(name, asked.modifiers):
        return True  # a row named for another of its kind ("Migration Engineer" for "data engineer")
    if asked.compounds and _qualified_otherwise(unit, unit_words, covered, asked):
        return True  # "incident logs" where "application logs" are asked and a passage writes them
    if asked.periods and _of_another_period(unit, asked):
        return True  # "Annual plans cancelled after ..." where a monthly plan is asked
    # A record header answers a question about its fields, all of it: not "what did they ask".
    return record_fields is not None and bool(asked.needed - covered)


def _answer_from_parts(
    answered: list[_Selection], parts: list[str], weights: dict[str, float], generator_id: str, told: Told
) -> Answer:
    """An answer quoting each answered part's units in the parts' order; its coverage is the share of the parts'
    words their best units hold."""
    picked: list[tuple[ScoredChunk, int, int]] = []
    for found in answered:
        picked += [unit for unit in found.picked if unit not in picked]
    covered = set().union(*(found.covered for found in answered))
    asked = set().union(*(_asked_words(part) for part in parts), told.required)
    coverage = weighted_share(covered, asked, weights)
    return dataclasses.replace(quoted_answer(picked, generator_id), coverage=coverage)


# "what does downtime mean", "what is scheduled maintenance", "define service credit", "what's the meaning of a P2",
# "p1 definition":
# the phrase asked about.
_ASKS_MEANING = (
    re.compile(r"^\W*what\s+(?:does|do)\s+(?:an?\s+|the\s+)?(.+?)\s+mean\W*$", re.IGNORECASE),
    re.compile(
        r"^\W*(?:what\s*(?:'s|s|\s+is|\s+are)|define)\s+"
        r"(?:the\s+meaning\s+of\s+|meant\s+by\s+)?(?:an?\s+|the\s+)?(.+?)\W*$",
        re.IGNORECASE,
    ),
    re.compile(r"^\W*(.+?)\s+mean(?:s|ing)?\W*$", re.IGNORECASE),
    # "p1 definition", "definition of downtime"
    re.compile(r"^\W*(.+?)\s+definition\W*$", re.IGNORECASE),
    re.compile(r"^\W*(?:the\s+)?definition\s+of\s+(?:an?\s+|the\s+)?(.+?)\W*$", re.IGNORECASE),
    # "how is uptime percentage calculated": what the thing is defined as says how it is worked out.
    re.compile(
        r"^\W*how\s+(?:is|are)\s+(?:an?\s+|the\s+)?(.+?)\s+(?:calculated|computed|measured|defined|determined)\W*$",
        re.IGNORECASE,
    ),
)
# "what counts as a P2 incident", "what qualifies as downtime": asks what the thing is, whatever the words after it.
_ASKS_CLASS = re.compile(
    r"^\W*what\s+(?:counts|qualifies|(?:is|are)\s+considered)\s+as\s+(?:an?\s+|the\s+)?(.+?)\W*$", re.IGNORECASE
)
# A unit that opens by defining its subject: '1.4 "Downtime" means ...', "- Downtime: ...", "Downtime is ...".
# A list marker or a clause's number before a unit's first word ("- ", "1.4 ").
_CLAUSE_LEAD = r"^[\s\-*•]*(?:\d+(?:\.\d+)*\.?\s+)?"
_DEFINITION_LEAD = re.compile(rf"{_CLAUSE_LEAD}[\"“']?")
# What follows the name a definition defines, in both readings below.
_DEFINING = r"(?::|=|means\b|is\b|are\b|refers to\b|stands for\b)"
_DEFINITION_VERB = re.compile(rf"^[\"”']?\s*{_DEFINING}")
# Not the last name of a list ("E-4421 and E-4422 are ..."): what follows the list is said of them together.
_NOT_LISTED = r"(?<!\band )(?<!\bor )(?<!, )(?<!\bnor )"


# The words a question asking what something means frames it with: the unit that answers says what the thing is,
# and one that only writes "means" ('1.1 "Affiliate" means ...' for "what does X-RateLimit-Remaining mean") answers
# another question.
_MEANING_FRAME = frozenset({"mean", "define", "definition", "calculate", "compute", "measure", "determine"})
_CLASS_FRAME = frozenset({"count", "qualify", "consider"})
# The words a question asking about the rest frames it with ("other than invoices", "besides the vpn, what else").
_EXCLUDING_FRAME = frozenset({"besides", "apart", "aside", "except", "exclude", "else", "other"})
# A numbered clause named by its kind ("section 4.2 of the MSA", "what does clause 7.2 say"): the frame asking what
# it says is no word the clause ("4.2 If the Monthly Uptime ...") writes, nor is its kind, which the clause so
# numbered holds (entries.named_clause_units).
_NAMED_CLAUSE = re.compile(r"(?:\b(?:clause|section|article|paragraph)\s+|§\s*)\d+(?:\.\d+)*\b", re.IGNORECASE)
_SAYS_FRAME = frozenset({"say", "state"})
_NAME_WORDS = 3  # the most words a name asked about has ("scheduled maintenance window")
# Words naming the kind of thing a name is, written after it: "what does the P1 severity mean".
_KIND_WORDS = frozenset({"severity", "incident", "error", "warning", "code", "level", "priority"})


def _read_past_quote(query: str, passages: list[ScoredChunk]) -> tuple[str, list[ScoredChunk]]:
    """A question asked of what the asker quotes from a passage ('The MSA says "Customer will pay the fees stated in
    the Order Form" - does that include taxes?'): asked of the quote's documents only, as its rest ("does that
    include taxes?") unless that asks only whether the quote holds or follows it up; so too sentences pasted from a
    passage unquoted (asker_quotes). Otherwise as it came."""
    quote = asker_quote(query)
    quoted = quoted_passages(quote.quote, passages) if quote else []
    if not quoted:
        quote, quoted = pasted_quote(query, passages) or (None, [])
    if not quote or not quoted:
        return query, passages
    documents = {p.chunk.meta.document_id for p in quoted}
    anchored = [p for p in passages if p.chunk.meta.document_id in documents]
    return (quote.rest if asks_of_its_own(quote.rest) else query), anchored


def _asked_words(query: str, meaning: tuple[str, bool] | None = None, excluded: set[str] | None = None) -> set[str]:
    """The question's content words a unit must hold to answer it: question_terms, less the frame of a question
    asking what a name means ("mean" in "what does E-1002 mean", "define" in "define service credit") unless the
    frame is all it has ("what does it mean"). A longer question that ends in "mean" asks more than a meaning ("W-4510
    on my mac, is that real and what does it mean"): its "Meaning:" line holds a word of it."""
    terms = question_terms(query)
    # "other than invoices what do we keep 7 years" asks about the rest: its frame is no word the answer must hold
    # ("other", "besides", "else"); what it sets aside still says what the question is about (invoices are records).
    # `meaning`, `excluded`: _asked_meaning's and excluded_terms' readings, when the caller has them.
    if (excluded_terms(query) if excluded is None else excluded) and terms - _EXCLUDING_FRAME:
        terms -= _EXCLUDING_FRAME
    if _NAMED_CLAUSE.search(query) and terms - _SAYS_FRAME:
        terms -= _SAYS_FRAME
    phrase, by_class = meaning or _asked_meaning(query)
    frame = _CLASS_FRAME if by_class else _MEANING_FRAME
    if phrase and len(phrase.split()) <= _NAME_WORDS and terms - frame:
        return terms - frame
    return terms


def _asked_meaning(query: str) -> tuple[str, bool]:
    """The phrase a question asks the meaning of, lower-cased as written ("downtime"; "" for any other question),
    and whether it asks what counts as the thing ("what counts as a P2 incident")."""
    for pattern in (_ASKS_CLASS, *_ASKS_MEANING):
        match = pattern.match(query)
        if match:
            return match.group(1).strip().lower(), pattern is _ASKS_CLASS
    return "", False


def _names_defined(phrase: str, named: set[str], by_class: bool = False) -> set[str]:
    """The names a question asks the meaning of (`phrase`, from _asked_meaning), when that is all it asks, one name
    ("what is a P1", "whats E-4412", "E-4422 meaning"); empty otherwise ("whats in v2.1.1" asks what a release
    holds). A question asking what counts as a thing (`by_class`) asks what its names are, whatever else it says of
    them ("what counts as a P2 incident": P2)."""
    if by_class and len(phrase.split()) <= _NAME_WORDS:
        return content_terms(phrase) & named
    words = phrase.split()
    if len(words) == 2 and (kind := content_terms(words[1])) and kind <= _KIND_WORDS:
        words = words[:1]  # "the P1 severity", "the E-4412 error": the name with the kind of thing it names
    terms = content_terms(words[0]) if len(words) == 1 else set()
    return terms if terms and terms <= named else set()


def _opens_with_definition(unit: str, phrase: str) -> bool:
    """Whether a unit opens by saying what the phrase means: '1.4 "Downtime" means a period of ...' for "downtime",
    not '1.3 "Monthly Uptime Percentage" means ... minus the minutes of Downtime ...'."""
    text = _DEFINITION_LEAD.sub("", unit.lower(), count=1)
    if text.startswith(phrase) and _DEFINITION_VERB.match(text[len(phrase) :]):
        return True
    # A defined term in quotes that names the thing or a kind of it, in any number: '"Monthly Uptime Percentage"
    # means ...' defines the uptime percentage a reader asks how it is calculated, '"Service Credit" means ...' the
    # service credits.
    quoted = _QUOTED_DEFINITION.match(unit)
    if not quoted:
        return False
    defined, asked = content_terms(quoted.group(1)), content_terms(phrase)
    head = content_terms(quoted.group(1).split()[-1])
    return bool(asked) and asked <= defined and head <= asked


# A defined term in quotes, as a contract's definitions write it: '1.5 "Scheduled Maintenance" means ...'.
_QUOTED_DEFINITION = re.compile(rf"{_CLAUSE_LEAD}[\"“]([^\"”]{{1,60}})[\"”]\s+(?:means|refers to)\b")


def _defines_asked(unit: str, wanted: set[str]) -> bool:
    """Whether a unit opens by defining, in quotes, a term the question names all the words of."""
    match = _QUOTED_DEFINITION.match(unit)
    terms = content_terms(match.group(1)) if match else set()
    return bool(terms) and terms <= wanted


def _defines(unit: str, named: set[str]) -> bool:
    """Whether a unit says what a named thing is: "- P1: complete outage ...", "E-4412 means ...", "W-2203 is
    the early warning ...". The last name of a list says what they are together ("E-4421 and E-4422 are now
    separate codes"), not what it is."""
    text = unit.lower()
    return any(re.search(rf"{_NOT_LISTED}{re.escape(name)}\W{{0,2}}\s*{_DEFINING}", text) for name in named)


def _row_name(unit: str) -> list[str]:
    """A table row's name: its first cell's words in order ("Migration Engineer": migration, engineer); empty for a
    unit that is not a row."""
    first_cell = item_name(unit) if unit.lstrip().startswith("|") else ""
    return [term for word in first_cell.split() for term in content_terms(word)]


def _states_scope(
    row: bool, unit_words: frozenset[str], covered: set[str], asked: _Asked, name: list[str] | None = None
) -> bool:
    """Whether a sentence says what something applies to by naming two or more other rows and not the one a yes/no
    question names ("Team and Business plans include a 14-day free trial" for "is there a free trial for starter",
    "A post-incident review (PIR) is required for every P1 and P2" for "do P3s need a PIR"): it answers no. So does a
    row of another table naming them in a cell ("| Advanced SSO (SCIM provisioning) | ... | Team, Business |" for
    "is scim available on starter"), not one of the rows themselves (`name`: a row's first cell)."""
    if row and (asked.rows | asked.other_rows).intersection(name or []):
        return False
    return asked.polar and len(unit_words & asked.other_rows) >= 2 and not covered & asked.rows


def _about_other_row(row: bool, name: list[str], unit_words: frozenset[str], covered: set[str], asked: _Asked) -> bool:
    """Whether a unit is about another row of a table than the one the question names: a sentence that names a
    sibling and not the row asked about, or a table row whose own name is a sibling ("| Starter | ... | 2 business
    days |" is the Starter row, though a cell says "business")."""
    if not asked.other_rows:
        return False
    if row:
        return bool(asked.other_rows.intersection(name)) and not asked.rows.intersection(name)
    if not unit_words & asked.other_rows or covered & asked.rows:
        return False
    return not _states_scope(row, unit_words, covered, asked)


def _about_another_of_heading(unit_words: frozenset[str], side_by_side: list[list[set[str]]], wanted: set[str]) -> bool:
    """Whether a unit under a heading naming things side by side ("Internet and phone") is about one the question
    does not ask of: "Employees can expense up to $60 per month for home internet" names internet, not phone, so it
    does not answer "can i expense my phone", though it holds "phone" by its heading."""
    for parts in side_by_side:
        asked = [part for part in parts if part & wanted]
        named = [part for part in parts if part & unit_words]
        if asked and named and not any(part & wanted for part in named):
            return True
    return False


def _qualified_otherwise(unit: str, unit_words: frozenset[str], covered: set[str], asked: _Asked) -> bool:
    """Whether a unit names a thing the question qualifies ("application logs") only with other words ("Forensic
    images and incident logs are kept for 3 years") and never holds the question's qualifier: it is about another
    thing of the kind. Read only where a passage writes the question's phrase (asked.compounds), so a question worded
    unlike the documents ("hotel cap" for their "lodging cap") is not refused its answer by it."""
    heads = asked.compounds.keys() & unit_words
    if not heads:
        return False
    pairs = modifier_pairs(unit)
    for head in heads:
        if asked.compounds[head] & (covered | unit_words):
            continue
        others = {before for term, before in pairs if term == head}
        if others and not others & asked.wanted:
            return True
    return False


def _of_another_period(unit: str, asked: _Asked) -> bool:
    """Whether a unit qualifies a word the question qualifies by a period ("monthly plan") by another period only
    ("Annual plans cancelled after the 14-day window are prorated"): daily and weekly backups, monthly and annual
    plans are different things of a kind, whatever words they share. A unit naming a period the question names
    is not."""
    if periods_named(unit) & asked.periods_named:
        return False
    qualified = period_qualified(unit)
    return any(head in qualified for head in asked.periods)


def _by_head(pairs: set[tuple[str, str]]) -> dict[str, set[str]]:
    """(term, qualifier) pairs as each term's qualifiers."""
    out: dict[str, set[str]] = {}
    for term, before in pairs:
        out.setdefault(term, set()).add(before)
    return out


def _names_another(name: list[str], modifiers: dict[str, str]) -> bool:
    """Whether a table row's name of several words ("Migration Engineer") ends in a word the question qualifies
    otherwise ("data engineer"): the row is another thing of the kind the question asks about."""
    if len(name) < 2 or name[-1] not in modifiers:
        return False
    return modifiers[name[-1]] not in name


def _row_named(name: list[str], wanted: set[str]) -> bool:
    """Whether a table row's name (its first cell) holds one of the question's words: a row is about what it is
    named, so for "storage on business" the Business row answers before the Team row whose support column says
    "1 business day"."""
    return bool(wanted.intersection(name))
