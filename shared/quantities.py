"""Amounts a question names and the ranges a document states: "uptime was 99.2%" falls in "99.0% to below 99.9%",
"600 seats" in "more than 500 seats", "a 15% discount" in "10% to 25% requires approval". A tier table or rule
answers a question about a value it never writes out; matching words alone cannot see that.

Only amounts with a unit take part (a percentage, a currency, or the word after the number: seats, days, hours),
and a range holds an amount only in the same unit: a bare number ("windows 7", "clause 9") is never in a range,
unless the question bounds it ("trip over 5000", "uptime under 95": the bound says it is an amount, the document
says of what). A question's bound is part of its amount: "over $5,000" is held by "above $5,000", not by
"$1,500 to $5,000". "5k" is 5,000. Durations meet across units: "2 weeks" is the "14-day window".
"""

import dataclasses
import math
import re

from shared.text import content_terms, periods_named

# A number with an optional currency before it and a percent sign or a word after it: "$1,500", "99.0%", "500 seats";
# "5k" is thousands.
_AMOUNT = re.compile(
    r"(?P<cur>[$€£])?(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?P<k>[kK]\b)?(?P<pct>\s?%)?"
    r"(?:(?:[ \t]+|-)(?P<word>[A-Za-z]+))?"  # "500 seats", and "14-day" as a unit word too
)
# What joins the two ends of a range: "99.0% to below 99.9%", "$1,500 to $5,000", "5% – 10%" ("and" lists amounts).
_JOIN = re.compile(r"\s*(?:to|through|-|–|—)\s*(?P<open>below|under|less than)?\s*$", re.IGNORECASE)
# A bound before its amount, and the side of the range it makes.
_BEFORE = (
    (re.compile(r"(?:below|under|less than|fewer than)\s*$", re.IGNORECASE), "below"),
    (
        re.compile(
            r"(?:up to|at most|no more than|not more than|maximum of|max\.?|not exceeding|not exceed|limited to|"
            r"capped at|a cap of)\s*$",
            re.IGNORECASE,
        ),
        "upto",
    ),
    (re.compile(r"(?:above|over|more than|greater than|exceeding|in excess of)\s*$", re.IGNORECASE), "above"),
    (re.compile(r"(?:at least|minimum of|min\.?|no less than)\s*$", re.IGNORECASE), "atleast"),
)
# A bound after its amount and the amount's unit word, if any: "6 hours or longer", "500 seats or more", "10% or less".
_AFTER = (
    (
        re.compile(
            # "+" only right after the number: "5 users + 3 admins" adds, "5+ users" bounds.
            r"^\s*\+|^(?:[ \t]+[A-Za-z]+)?\s*or (?:more|above|higher|greater|longer|over)\b(?!\s+than)",
            re.IGNORECASE,
        ),
        "atleast",
    ),
    (
        re.compile(r"^(?:[ \t]+[A-Za-z]+)?\s*or (?:less|fewer|below|lower|shorter|under)\b(?!\s+than)", re.IGNORECASE),
        "upto",
    ),
)


# Units a reader converts without a second thought ("2 weeks" is "14 days", "48 hours" is "2 days"), each as a
# multiple of its family's smallest. A month is not a whole number of days, so months and years are their own family.
_CONVERSIONS = {
    "second": ("time", 1),
    "minute": ("time", 60),
    "hour": ("time", 3600),
    "day": ("time", 86400),
    "week": ("time", 604800),
    "month": ("calendar", 1),
    "quarter": ("calendar", 3),
    "year": ("calendar", 12),
    # Sizes of storage, decimal as it is sold: "5 TB" is not the 5 of "within 5 minutes". Not "kb" or "mb", which in
    # biology are kilobases and megabases.
    "gb": ("data", 1),
    "tb": ("data", 1000),
}


def _converted(value: float, unit: str, into: str) -> float | None:
    """The value in another unit of its family (None: not convertible; the value itself in its own unit). A sum in
    no named currency ("a 3000 refund") is the same sum in whichever the text states."""
    if unit == into or (unit == SOME_CURRENCY and into in _CURRENCIES):
        return value
    if unit not in _CONVERSIONS or into not in _CONVERSIONS or _CONVERSIONS[unit][0] != _CONVERSIONS[into][0]:
        return None
    return value * _CONVERSIONS[unit][1] / _CONVERSIONS[into][1]


@dataclasses.dataclass(frozen=True)
class Amount:
    value: float
    unit: str  # "%", "$", "€", "£", or the stemmed word after the number ("seat", "day")
    terms: frozenset[str]  # the content terms the number is written as ("1", "500" for "$1,500")
    start: int
    end: int
    # A question's bound on it: "above" for "over 5000" (any value past it), "below" for "under 95", "" for a value.
    bound: str = ""
    # Whether it counts things named by a plural noun ("100 seats", "20 users"), which no share, sum, size or time is.
    # Only a plural: the word after a number may be a qualifier of its unit ("5 extra minutes", "2 kb").
    counted: bool = False
    # Whether it is a time ahead of something ("14 days before departure", "72 hours in advance", "10 days' notice").
    ahead: bool = False

    @property
    def kind(self) -> str:
        """What it measures when that is known ("share", a currency, "time", "calendar", "data"); "" for a count or
        a name ("20 seats", "ISO 27001 certified")."""
        return _kind(self.unit)


@dataclasses.dataclass(frozen=True)
class Range:
    low: float
    high: float
    unit: str
    low_open: bool = False
    high_open: bool = False
    ahead: bool = False  # a range of times ahead of something ("at least 14 days before departure")

    def in_unit(self, amount: Amount) -> float | None:
        """The amount's value in this range's unit: a bounded bare number ("over 5000") as it is, a value in another
        unit of its family converted ("3 weeks" as 21 days); None when it is in no unit of the range's."""
        return amount.value if not amount.unit and amount.bound else _converted(amount.value, amount.unit, self.unit)

    def holds(self, amount: Amount) -> bool:
        if self.ahead and not amount.ahead:
            return False  # how far ahead to ask is not how long a stay may be ("for 60 days")
        # A bare number is in a range only when the question bounds it ("over 5000"), and never in one of time: "more
        # than 300 of them" is not in "after 37 weeks". "3 weeks" is in "up to 30 days".
        if not amount.unit and _kind(self.unit) == "time":
            return False
        value = self.in_unit(amount)
        if value is None:
            return False
        if not amount.unit and self.unit == "%" and value > 100:
            return False  # "refund over 5k" is no share: not in "discounts of 20% or more"
        if amount.bound == "above":  # the values just past it: "over $5,000" is in "above $5,000"
            return self.low <= value < self.high
        if amount.bound == "below":
            return self.low < value <= self.high
        above_low = value > self.low if self.low_open else value >= self.low
        below_high = value < self.high if self.high_open else value <= self.high
        return above_low and below_high


_CURRENCIES = ("$", "€", "£")
# A sum of money in no named currency: a number before a word naming a payment, or what it is spent on, in the
# singular ("who approves a 3000 refund", "a 10k invoice", "a 4000 trip"); "3 refunds" counts them.
SOME_CURRENCY = "¤"
_PAYMENT_WORDS = frozenset(
    {"refund", "payment", "fee", "charge", "invoice", "bill", "purchase", "expense", "reimbursement"}
    | {"trip", "flight", "hotel", "dinner", "meal", "order"}
)
# A bare number that a verb of paying names is a sum too ("a trip that costs 3000", "we paid 1200"), and so is one
# "of" a payment ("a refund of 5000", "an invoice of 900").
_PAID = re.compile(
    r"\b(?:costs?|costing|spent|spends?|spending|paid|pays?|paying|priced at|charged|worth"
    rf"|(?:{'|'.join(sorted(_PAYMENT_WORDS))})s? of)\s+$",
    re.IGNORECASE,
)
# A currency written as a word after the amount is the amount in that currency: "a 3000 dollar trip" is "$3,000",
# and "75 EUR" is "€75" (not "pounds", which also weigh); so is a percentage written out: "98.7 percent" is "98.7%".
_UNIT_WORDS = {"dollar": "$", "usd": "$", "buck": "$", "euro": "€", "eur": "€", "gbp": "£", "percent": "%", "pct": "%"}


def _unit(match: re.Match) -> str:
    if match["pct"]:
        return "%"
    if match["cur"]:
        return match["cur"]
    written = (match["word"] or "").lower()
    if written in _PAYMENT_WORDS and _value(match) > 1:
        return SOME_CURRENCY  # more than one, and the word written in the singular: a sum, not a count
    # The word is letters only, so it is one content term at most ("seats" -> seat; a stopword such as "to": none).
    word = next(iter(content_terms(written)), "")
    return _UNIT_WORDS.get(word, word)


def _value(match: re.Match) -> float:
    return float(match["num"].replace(",", "")) * (1000 if match["k"] else 1)


def amounts(text: str) -> list[Amount]:
    """Every number in the text with its unit ("" when it has none), in order."""
    out = []
    for m in _AMOUNT.finditer(text):
        if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "-."):
            continue  # inside an identifier or version (E-4412, v2.1), not an amount
        value = _value(m)
        # The word after it is its unit, not part of it.
        end = m.end("pct") if m["pct"] else m.end("k") if m["k"] else m.end("num")
        unit = _unit(m)
        counted = bool(m["word"]) and not _kind(unit) and unit != m["word"].lower() and m["word"][-1] in "sS"
        # The word after a sum that something paid names is no unit of it ("a refund of 5000 approval"); a plural
        # still counts ("costs 3 credits").
        if not _kind(unit) and not counted and _PAID.search(text, max(0, m.start() - 24), m.start()):
            unit = SOME_CURRENCY
        terms = frozenset(content_terms(m["num"] + (m["k"] or "")))
        ahead = _kind(unit) in ("time", "calendar") and bool(_AHEAD.match(text, m.end()))
        out.append(Amount(value, unit, terms, m.start(), end, counted=counted, ahead=ahead))
    return out


# What makes a time one ahead of something, after its unit word: "14 days before departure", "72 hours in advance",
# "10 days' written notice", "2 weeks prior".
_AHEAD = re.compile(
    r"['’]?\s*(?:written\s+)?(?:before\b|prior\b|in advance\b|ahead\b|beforehand\b|notice\b)", re.IGNORECASE
)
_BEFORE_REACH = 24  # how far before an amount its bound's words are looked for ("no more than", "within")


def _bound(text: str, amount: Amount) -> tuple[str, str]:
    """How the words around an amount bound it ("below", "upto", "above", "atleast" or "": no bound), and those
    words."""
    before, after = text[max(0, amount.start - _BEFORE_REACH) : amount.start], text[amount.end :][:32]
    for patterns, around in ((_BEFORE, before), (_AFTER, after)):
        for pattern, side in patterns:
            match = pattern.search(around)
            if match:
                return side, match.group(0)
    if amount.kind == "time" and (match := _AFTER_TIME.search(before)):
        return "above", match.group(0)
    return "", ""


# A time past a span: "cancelled after 14 days" is any time past the 14th day, as "Annual plans cancelled after the
# 14-day window are prorated" says (and "within the 14-day window" does not). Only of time: "after $500" bounds
# nothing.
_AFTER_TIME = re.compile(r"\bafter(?:\s+the)?\s*$", re.IGNORECASE)


_PERCENT_OFF = re.compile(r"[ \t]*off\b", re.IGNORECASE)


def question_amounts(question: str) -> list[Amount]:
    """The amounts of a question that a range can hold: those with a unit, and bare numbers the question bounds
    ("over 5000", "under 95"), each with its bound. The bound's words are the amount's as much as its digits: a range
    holding "over 5000" holds the question's "over" too, and one holding "30% off" its "off"."""
    out = []
    for a in amounts(question):
        if a.unit == "%" and _PERCENT_OFF.match(question, a.end):
            a = dataclasses.replace(a, terms=a.terms | {"off"})  # "30% off" is a discount of 30%, "off" and all
        bound, words = _bound(question, a)
        if bound in ("above", "below"):
            out.append(dataclasses.replace(a, bound=bound, terms=a.terms | content_terms(words)))
        elif a.unit:
            out.append(a)
    return out


def ranges(text: str, found: list[Amount] | None = None) -> list[Range]:
    """The ranges the text states: two amounts joined ("X to below Y"), or one bound by a word ("more than X",
    "up to X", "X or more", "6 hours or longer", "10% or less"). The unit of a bare end is the other end's
    ("1-3 days"). `found`: the text's amounts, when the caller has read them already."""
    found = amounts(text) if found is None else found
    out = []
    paired: set[int] = set()
    for i in range(len(found) - 1):
        a, b = found[i], found[i + 1]
        join = _JOIN.match(text[a.end : b.start]) if b.start - a.end <= 16 else None
        unit = "" if a.unit and b.unit and a.unit != b.unit else a.unit or b.unit
        if join and unit and a.value <= b.value:
            out.append(Range(a.value, b.value, unit, high_open=bool(join["open"]), ahead=b.ahead))
            paired |= {i, i + 1}
    for i, a in enumerate(found):
        if i in paired or not a.unit:
            continue
        side, _ = _bound(text, a)
        if not side and a.kind == "time" and _WITHIN.search(text, max(0, a.start - _BEFORE_REACH), a.start):
            side = "upto"  # "a full refund within 14 days" holds a refund asked for after 10 days
        if side == "below":
            out.append(Range(-math.inf, a.value, a.unit, high_open=True, ahead=a.ahead))
        elif side == "upto":
            out.append(Range(-math.inf, a.value, a.unit, ahead=a.ahead))
        elif side == "above":
            out.append(Range(a.value, math.inf, a.unit, low_open=True, ahead=a.ahead))
        elif side == "atleast":
            out.append(Range(a.value, math.inf, a.unit, ahead=a.ahead))
    return out


# A span of time something is allowed in: "within 14 days" is up to 14 days. Read for ranges only, not as the limit a
# question's "max" asks for ("refunds are paid within 30 days" is no maximum credit).
_WITHIN = re.compile(r"\bwithin(?:\s+the)?\s*$", re.IGNORECASE)


def terms_in_ranges(
    wanted: list[Amount], text: str, found: list[Amount] | None = None, stated: list[Range] | None = None
) -> set[str]:
    """The content terms of the question's amounts that the text holds in a range, or states in another unit ("2
    weeks" and "14-day window": the question's unit word is held with its number). `found`, `stated`: the text's
    amounts and ranges, when the caller has read them already."""
    if not wanted:
        return set()
    found = amounts(text) if found is None else found
    stated = ranges(text, found) if stated is None else stated
    # The values the text states outright; a bounded one ("over 2 days") is a range's end.
    outright = [b for b in found if not _bound(text, b)[0]]
    held: set[str] = set()
    for a in wanted:
        within = [r for r in stated if r.holds(a)]
        # The same value stated in another unit ("2 weeks" and "14-day").
        equal = not a.bound and any(
            b.unit != a.unit and _converted(a.value, a.unit, b.unit) == b.value for b in outright
        )
        if within or equal:
            held |= a.terms
        # Held in another unit, the question's unit word is held with its number: the text has the other word.
        if equal or (a.unit in _CONVERSIONS and any(r.unit != a.unit for r in within)):
            held.add(a.unit)
    return held


def terms_bounded(
    wanted: list[Amount], text: str, found: list[Amount] | None = None, stated: list[Range] | None = None
) -> set[str]:
    """The content terms of the question's amounts that a bound the text states decides, on either side: a yes/no
    question ("can an AE give 15% off alone") is answered by "Account Executives may give up to 10% off without
    approval", which does not hold 15% but says no. Only a one-sided range in the amount's unit family. `found`,
    `stated`: as for terms_in_ranges."""
    if not wanted:
        return set()
    stated = ranges(text, found) if stated is None else stated
    bounds = [r for r in stated if math.isinf(r.low) != math.isinf(r.high)]
    held: set[str] = set()
    for a in wanted:
        if a.unit and any(_converted(a.value, a.unit, r.unit) is not None for r in bounds):
            held |= a.terms
    return held


# A number before a month's name is a day of it ("3 November 2025"): a date, no count of days or weeks.
_MONTH_ABBREVIATIONS = "jan feb mar apr may jun jul aug sep sept oct nov dec".split()
_MONTH_NAMES_IN_ORDER = "january february march april may june july august september october november december".split()
_MONTH_NAMES = frozenset(_MONTH_NAMES_IN_ORDER) | frozenset(_MONTH_ABBREVIATIONS)


# Each month by its number, from its name or its abbreviation ("sep", "sept").
_MONTH_NUMBERS = {
    **{name: i for i, name in enumerate(_MONTH_NAMES_IN_ORDER, start=1)},
    **{name[:3]: i for i, name in enumerate(_MONTH_NAMES_IN_ORDER, start=1)},
    "sept": 9,
}
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-\d{2}\b")


def date_terms(wanted: set[str], text: str) -> set[str]:
    """The question's month names and years that a date the text states falls in: "the september outage" (or "the
    outage in september 2025") is "A P1 outage on 2025-09-09 lasted 41 minutes", and "sept" is September however
    the text writes it."""
    # Not "may", which a question asks with far more often than it names May.
    months = {term: _MONTH_NUMBERS[term] for term in wanted if term in _MONTH_NUMBERS and term != "may"}
    years = {term for term in wanted if len(term) == 4 and term.isdigit()}
    if not months and not years:
        return set()
    dates = _ISO_DATE.findall(text)
    stated = {int(month) for _, month in dates}
    stated |= {_MONTH_NUMBERS[word] for word in re.findall(r"[a-z]+", text.lower()) if word in _MONTH_NUMBERS}
    # A year by a date in it, and in the month asked where one is: "october 2025" is not held by 2025-09-09.
    dated_years = {year for year, month in dates if not months or int(month) in months.values()}
    return {term for term, month in months.items() if month in stated} | (years & dated_years)


def _kind(unit: str) -> str:
    """What an amount measures, for the units whose kind is known: "share", a currency, "time", "calendar", "data"
    or "date"."""
    if unit == "%":
        return "share"
    if unit in _MONTH_NAMES:
        return "date"
    if unit in _CURRENCIES or unit == SOME_CURRENCY:
        return unit
    return _CONVERSIONS[unit][0] if unit in _CONVERSIONS else ""


def _other_kinds(a: str, b: str) -> bool:
    """Whether two known kinds differ; a sum in no named currency is of every currency's kind."""
    return a != b and not (SOME_CURRENCY in (a, b) and {a, b} <= {SOME_CURRENCY, *_CURRENCIES})


def numbers_of_another_kind(wanted: list[Amount], text: str, found: list[Amount] | None = None) -> set[str]:
    """The digits of the question's amounts that the text writes only as another kind of quantity: "20%" does not
    hold the "20" of "a refund after 20 days", nor "$40" the "40" of "40 hours", nor "100 GB" the "100" of "100
    seats". Only known kinds differ (a share, a currency, time, a size; a count of things is none of them): "20
    seats" and "20 users" may be the same count. `found`: the text's amounts, when the caller has read them
    already."""
    asked = [a for a in wanted if a.kind or a.counted]
    if not asked:
        return set()
    found = amounts(text) if found is None else found
    out: set[str] = set()
    for a in asked:
        same = [b for b in found if b.value == a.value]
        # A count ("100 seats") is no quantity of a known kind: "Storage: 100 GB" does not hold its 100.
        if same and all(b.kind and (not a.kind or _other_kinds(b.kind, a.kind)) for b in same):
            out |= a.terms
    return out


def numbers_on_the_other_side(
    wanted: list[Amount], text: str, found: list[Amount] | None = None, stated: list[Range] | None = None
) -> set[str]:
    """The digits of the question's bounded amounts that the text writes only as the end of a range leaving them
    out: "cancelled after 14 days" is not held by "cancelled within the 14-day window" (up to the 14th day), which
    says what holds before the time asked about, nor "refunds over 2500" by "Refunds from $250 to $2,500".
    `found`, `stated`: the text's amounts and ranges, when the caller has read them already."""
    asked = [a for a in wanted if a.bound]
    if not asked:
        return set()
    found = amounts(text) if found is None else found
    stated = ranges(text, found) if stated is None else stated
    out: set[str] = set()
    for a in asked:
        ends = [r for r in stated if r.in_unit(a) in (r.low, r.high)]
        if ends and not any(r.holds(a) for r in ends):
            out |= a.terms
    return out


# "max"/"min" in a question names the kind of answer (a bound), as "how long" names a duration: a unit that bounds
# an amount from that side holds the word ("max webhook delivery rate": "limited to 50 deliveries per second").
_BOUND_WORDS = {"upper": {"max", "maximum", "cap"}, "lower": {"min", "minimum"}}
_ANY_BOUND_WORD = set().union(*_BOUND_WORDS.values())
# Only a limit bounds: "below 95.0%" and "above $5,000" state when something applies ("uptime below 95.0%"), not
# the most or least it may be.
_SIDES = {"upto": "upper", "atleast": "lower"}


def bound_terms(wanted: set[str], text: str, counts_only: bool = False) -> set[str]:
    """The question's "max"/"maximum" ("min"/"minimum") terms that the text holds by bounding an amount from above
    ("up to 10 seats", "will not exceed 50%") or below ("TLS 1.2 or higher", "at least 4 hours"). With
    `counts_only` (the question asks the most or least number of something, asks_bounded_count), only a bound on a
    count holds them: "up to 1 hour" is no maximum number of API keys."""
    asked = wanted & _ANY_BOUND_WORD
    if not asked:
        return set()
    bounded = [a for a in amounts(text) if not counts_only or (a.unit and not a.kind)]
    sides = {_SIDES[side] for a in bounded if (side := _bound(text, a)[0]) in _SIDES}
    return asked & set().union(*(_BOUND_WORDS[side] for side in sides))


# "threshold" asks for the amount from which something applies, which a bound on when it applies states: "receipt
# threshold" is answered by "Receipts are required for every item over $25", as "above $5,000" or "more than 25%"
# would. Not by any amount: "$60 per month" is a price.
_THRESHOLD_WORDS = frozenset({"threshold"})
_THRESHOLD = re.compile(
    r"\b(?:over|above|under|below|exceeding|(?:more|less|fewer|greater|higher|lower)\s+than|at\s+(?:least|most))"
    r"\s+[$€£¥]?\d",
    re.IGNORECASE,
)


def threshold_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "threshold" when the text bounds an amount from which something applies ("over $25")."""
    asked = wanted & _THRESHOLD_WORDS
    return asked if asked and _THRESHOLD.search(text) else set()


# "eligibility" asks who or what qualifies for something, which a condition states ("startup discount eligibility":
# "Startups with less than $5M in funding and fewer than 50 employees get 50% off"); "requirements" ask what one must
# be or do, which an obligation or a condition states ("laptop requirements": "Laptops must have full-disk
# encryption enabled").
_CONDITION_WORDS = frozenset({"eligibility", "eligible", "qualify", "qualification", "criterion", "requirement"})
_OBLIGATION_WORDS = frozenset({"requirement", "criterion"})
_COUNT = r"(?:[$€£¥]?\d|one|two|three|four|five|six|seven|eight|nine|ten|twelve)"
_CONDITION = re.compile(
    rf"\b(?:less|fewer|more|greater)\s+than\s+{_COUNT}|\bat\s+least\s+{_COUNT}|\bonly\s+(?:if|when|for)\b"
    r"|\beligible\b",
    re.IGNORECASE,
)
_OBLIGATION = re.compile(r"\bmust\b|\brequire[sd]?\b|\bmandatory\b", re.IGNORECASE)


def condition_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "eligibility" ("criteria") when the text states a condition, its "requirements" when it
    states an obligation."""
    held = wanted & _CONDITION_WORDS if _CONDITION.search(text) else set()
    return held | (wanted & _OBLIGATION_WORDS if _OBLIGATION.search(text) else set())


# "deadline" names the kind of answer as "max" does: a time limit. A unit that states one, a duration with the word
# that makes it a limit ("within 30 days of the trip", "at least 14 days before departure", "no later than 5 business
# days", "announced at least 72 hours in advance"), holds the word.
DEADLINE_WORDS = frozenset({"deadline", "cutoff"})  # the words a question asks for a time limit with
# Between a count and its time unit: "30 days", "5 business days", "24-hour".
_COUNTED = r"(?:[ \t-]+(?:business|calendar|working))?[ \t-]+"
_DURATION = rf"\b\d+{_COUNTED}(?:second|minute|hour|day|week|month|year)s?\b"
_TIME_LIMIT = re.compile(
    rf"\b(?:within|before|no later than|not later than|by)\b.{{0,40}}?{_DURATION}"  # "within 30 days"
    rf"|{_DURATION}.{{0,40}}?\b(?:before|after|prior\s+to|in\s+advance|ahead)\b",  # "14 days before departure"
    re.IGNORECASE,
)


_ASKS_DURATION = re.compile(r"\bhow\s+(long|soon|fast|quickly|quick)\b", re.IGNORECASE)
# "how fast is the api" asks a speed: after "is" it names a thing and nothing done to it (no participle, as "how fast
# is the cache purged" and "how quickly are refunds paid" have).
_ASKS_SPEED = re.compile(r"\s+(?:is|are|was|were)((?:\s+[\w-]+){1,4})\s*\??\s*$", re.IGNORECASE)
_PARTICIPLE = re.compile(r"\w+ed|paid|sent|done|made|built|kept|told|given|taken|shown|seen|known", re.IGNORECASE)
_STATED_DURATION = re.compile(_DURATION, re.IGNORECASE)


def asks_for_duration(question: str) -> bool:
    """A "how long"/"how soon" question, or one asking how fast something is done: its answer is a span of time."""
    match = _ASKS_DURATION.search(question)
    if not match:
        return False
    if match.group(1).lower() in ("long", "soon"):
        return True
    speed = _ASKS_SPEED.match(question, match.end())
    return not speed or any(_PARTICIPLE.fullmatch(word) for word in speed.group(1).split())


def states_duration(text: str) -> bool:
    """The text states a span of time in digits ("30 days", "2 business days", "24-hour")."""
    return bool(_STATED_DURATION.search(text))


# A span in words: by the event that ends it ("continues until all Order Forms have expired", "kept for as long as
# the account is active"), as having no end ("never", "indefinitely"), its length spelled out ("one year", "a
# week"), or where its length is given ("wait for the number of seconds in `Retry-After`", "`Retry-After`: ...
# seconds to wait before retrying" answer "how long to wait after a 429"). Each answers "how long" as well as "90
# days" does.
_TIME_UNIT = r"(?:second|minute|hour|day|week|fortnight|month|quarter|year)"
_SPAN_IN_WORDS = re.compile(
    r"\b(?:until|till|as long as|indefinitely|permanently|forever|never)\b"
    rf"|\b(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve){_COUNTED}{_TIME_UNIT}s?\b"
    rf"|\bnumber\s+of\s+{_TIME_UNIT}s\b|\b{_TIME_UNIT}s\s+to\s+wait\b",
    re.IGNORECASE,
)


# "how long does a refund take": the time a thing takes, not a window measured from an event.
_ASKS_TIME_TAKEN = re.compile(r"\bhow\s+long\b.*\b(?:take|takes|taking|took)\b", re.IGNORECASE)
# A span measured from an event: "within 14 days of the initial purchase", "30 days after the invoice date",
# "After 14 days, no refund is given".
_ANCHORED_SPAN = re.compile(
    rf"{_DURATION}\s+(?:of|after|from|before|following)\b|\b(?:after|before)\s+{_DURATION}", re.IGNORECASE
)


def asks_time_taken(question: str) -> bool:
    """A "how long does it take" question: its answer is how long a thing lasts, not a deadline."""
    return bool(_ASKS_TIME_TAKEN.search(question))


def states_anchored_span(text: str) -> bool:
    """The text states a span measured from an event ("within 14 days of the initial purchase"): a window or a
    deadline, not how long something takes."""
    return bool(_ANCHORED_SPAN.search(text))


# "which header tells me how long to wait" asks for the header: the span is what the header says, not the answer.
_ASKS_WHICH_THING = re.compile(r"\b(?:which|what)\b[^?]*?\bhow\s+(?:long|soon)\b", re.IGNORECASE)


def asks_only_for_duration(question: str) -> bool:
    """A "how long" question whose answer is the span itself, not a thing that tells it."""
    return asks_for_duration(question) and not _ASKS_WHICH_THING.search(question)


def states_span(text: str) -> bool:
    """The text says how long something lasts: a duration in digits or in words, or the event that ends it."""
    return states_duration(text) or bool(_SPAN_IN_WORDS.search(text))


# "how often are backups taken", "how frequently do rotations change": the answer is a frequency, stated by a period
# ("Daily backups", "billed per month", "every 6 hours"), a count of times ("twice a year", "3 times"), or the span
# that repeats ("Each rotation is one week long").
_ASKS_FREQUENCY = re.compile(r"\bhow\s+(?:often|frequently)\b|\bwhat\s+(?:frequency|interval)\b", re.IGNORECASE)
_STATED_TIMES = re.compile(
    r"\b(?:once|twice|thrice|(?:\d+|two|three|four|five|six|ten)\s+times|nightly|fortnightly|biweekly"
    r"|frequency|interval)\b",
    re.IGNORECASE,
)


def asks_for_frequency(question: str) -> bool:
    """A "how often" question: its answer says how often something happens."""
    return bool(_ASKS_FREQUENCY.search(question))


def states_frequency(text: str) -> bool:
    """The text says how often something happens: a period ("daily", "per week", "every 6 hours"), a count of times,
    or a span that repeats ("one week long")."""
    return bool(periods_named(text)) or states_span(text) or bool(_STATED_TIMES.search(text))


_ASKS_DATE = re.compile(r"\b(?:when|dates?)\b", re.IGNORECASE)
_MONTH = rf"(?:{'|'.join(_MONTH_ABBREVIATIONS)})[a-z]*\.?"
_STATED_DATE = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}\b|\b\d{{1,2}}\s+{_MONTH}\s+\d{{4}}\b",
    re.IGNORECASE,
)


def asks_for_date(question: str) -> bool:
    """A "when" or "what date" question."""
    return bool(_ASKS_DATE.search(question))


_ASKS_VERSION = re.compile(r"\b(?:versions?|releases?|builds?)\b", re.IGNORECASE)
_STATED_VERSION = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")


def asks_for_version(question: str) -> bool:
    """A "which version" / "which release" question."""
    return bool(_ASKS_VERSION.search(question))


def states_version(text: str) -> bool:
    """The text states a version number ("v2.1.3", "2.1")."""
    return bool(_STATED_VERSION.search(text))


def states_date(text: str) -> bool:
    """The text states a calendar date ("2025-06-01", "June 1, 2025", "1 June 2025")."""
    return bool(_STATED_DATE.search(text))


# A share taken off a price states a discount ("get 40% off Team and Business" answers "nonprofit discount"), and any
# share states a percentage ("nonprofit discount percent").
_DISCOUNT_WORDS = frozenset({"discount"})
_SHARE_WORDS = frozenset({"percent", "percentage"})


def share_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "discount" where the text takes a share off a price ("10% off"), and its "percent" or
    "percentage" where the text states a share."""
    asked = wanted & (_DISCOUNT_WORDS | _SHARE_WORDS)
    if not asked:
        return set()
    shares = [a for a in amounts(text) if a.unit == "%"]
    out = asked & _SHARE_WORDS if shares else set()
    if any(_PERCENT_OFF.match(text, a.end) for a in shares):
        out |= asked & _DISCOUNT_WORDS
    return out


# Words naming how long a thing lasts: "oauth token lifetime" is answered by "the OAuth access token is older than 60
# minutes". Not "duration" or "period", which name spans of anything (a study's, a billing period).
LIFETIME_WORDS = frozenset({"lifetime", "ttl", "validity"})


def deadline_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "deadline" ("cutoff") when the text states a time limit: "expense report deadline" is answered
    by "Expenses must be submitted within 30 days of the trip end date", not by the sentence on how to submit; and
    its "lifetime" ("ttl", "validity") when the text states a span of time."""
    asked = wanted & DEADLINE_WORDS
    held = asked if asked and _TIME_LIMIT.search(text) else set()
    lasting = wanted & LIFETIME_WORDS
    return held | (lasting if lasting and _STATED_DURATION.search(text) else set())


# "late" asks about what happens past a time limit, which a text states as after it ("Annual plans cancelled after the
# 14-day window are prorated"), more than a span past something ("more than 30 days past due") or overdue.
_PAST_LIMIT = re.compile(
    rf"\bafter\s+(?:the\s+)?(?:\d+{_COUNTED}(?:day|week|month|year)s?|deadline|window|due\s+date)\b"
    r"|\bmore\s+than\s+\d+\s+(?:business\s+|calendar\s+)?days\b|\boverdue\b|\bpast\s+due\b",
    re.IGNORECASE,
)


def late_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "late" when the text states what holds past a time limit: "annual plan proration if cancelled
    late" is answered by "Annual plans cancelled after the 14-day window are prorated by unused days"."""
    return {"late"} if "late" in wanted and _PAST_LIMIT.search(text) else set()


# "payment terms" and "net" ("net 30") ask when an invoice is due, which a text states as due within a span: "invoice
# payment terms net?" is answered by "Unless stated otherwise, invoices are due within 30 days of the invoice date".
_DUE_WITHIN = re.compile(rf"\bdue\s+(?:within|in)\s+\d+{_COUNTED}(?:day|week|month)s?\b|\bnet\s+\d+\b", re.IGNORECASE)


def due_date_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "net", and its "payment" (read as "pay") and "term" where it asks payment terms, when the text
    states when payment is due."""
    asked = (wanted & {"net"}) | ({"pay", "term"} if {"pay", "term"} <= wanted else set())
    return asked if asked and _DUE_WITHIN.search(text) else set()


# Questions whose answer is a number: a count, a price, a fee, a limit ("how many seats", "pager number", "starter
# plan price", "max api keys"). Not a question whose answer is yes or no ("do prices move with exchange rates") or
# one of the options it names ("per key or per workspace"), nor a duration or a date ("how long", "when": "until
# the end of the term" answers those in words).
_ASKS_NUMBER = re.compile(r"\b(how (many|much)|numbers?|prices?|pricing|costs?|fees?|max(imum)?|min(imum)?)\b", re.I)
_YES_NO = re.compile(
    r"^\W*(do|does|did|is|are|was|were|can|could|will|would|should|may|might|must|has|have|had)\b", re.I
)
_OPTIONS = re.compile(r"\w\s+or\s+\w", re.I)
# A question asking where, who or how to do something: "where to apply for startup pricing" asks where to write,
# answered by "Applications go through startups@...", though it names a price.
_ASKS_PLACE_OR_WAY = re.compile(r"^\W*(?:where|who|whom|how\s+(?:do|does|can|to|should))\b", re.I)
# A number in words counts as one ("three seats", "unlimited"); "no" and "without" do only as _NONE_OF reads them.
_NUMBER_WORDS = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|hundred|thousand|million|"
    r"unlimited|free|zero|none)\b",
    re.I,
)
# "no" and "without" state a count of zero of what follows them ("without a processing fee"): a number only where
# that is what is counted, or a limit or price of it ("no browser is available" says nothing of API keys).
_NONE_OF = re.compile(r"\b(?:no|without)\s+((?:[\w-]+\s+){0,2}[\w-]+)", re.I)
_LIMIT_WORDS = frozenset({"limit", "cap", "maximum", "minimum", "charge", "fee", "cost"})


def asks_for_number(question: str) -> bool:
    return (
        bool(_ASKS_NUMBER.search(question))
        and not _YES_NO.search(question)
        and not _OPTIONS.search(question)
        and not _ASKS_PLACE_OR_WAY.search(question)
    )


# A name that holds digits after its letters ("REST API (v2)", "E-4412", "P1") counts nothing, though it may be
# the number a question asks for ("cost center code", "version number"); digits before letters count ("10GB").
_NAME_WITH_DIGITS = re.compile(r"\b[A-Za-z]+-?\d[\w.]*")
_ASKS_COUNT = re.compile(r"\bhow\s+(many|much)\b", re.I)


# "max number of api keys", "minimum no. of seats": the bound asked for is on a count.
_ASKS_BOUNDED_COUNT = re.compile(r"\b(?:max|maximum|min|minimum)\.?\s+(?:number|no\.?|count)\s+of\b", re.IGNORECASE)


def asks_bounded_count(question: str) -> bool:
    """The question asks the most or least number of something ("max number of api keys")."""
    return bool(_ASKS_BOUNDED_COUNT.search(question))


_ASKS_HOW_MANY = re.compile(r"\bhow\s+many\s+([a-z]+)", re.IGNORECASE)


def counted_thing(question: str) -> str:
    """The thing a question counts ("plan" in "how many plans are there", "level" in "how many severity levels"),
    as a content term; "" when it asks no count of things, or the count of a measure ("how many days", "how many
    hours notice"), which a time, a share or a sum states."""
    match = _ASKS_HOW_MANY.search(question)
    if not match:
        return ""
    words = [t for w in re.findall(r"[a-z]+", question[match.start(1) :].lower())[:2] for t in content_terms(w)]
    if not words:
        return ""
    # "how many severity levels": the second word when the first qualifies it, as a plural names what is counted.
    qualified = len(words) > 1 and not match.group(1).lower().endswith("s")
    thing = words[1] if qualified else words[0]
    return "" if _kind(thing) or thing in _UNIT_WORDS else thing  # "how many PTO days" counts a measure


def states_count(text: str, counted: str) -> bool:
    """The text states a count of the thing: a number of it, a qualifier between them or not ("5 seats", "8 parallel
    workers", "four times"), or a bare number ("| Starter | 3 |"); "the 14-day window" counts days, "more than 10%
    of requests" is a share and "5 seats" no count of plans. A clause's or list item's number ("4.2 If ...") and a
    year count nothing."""
    opening = len(text) - len(text.lstrip(" \t-*|"))
    for a in amounts(text):
        year = not a.unit and a.value.is_integer() and 1900 <= a.value <= 2099 and "," not in text[a.start : a.end]
        if not a.kind and not a.unit and a.start != opening and not year:
            return True
    # The word counted is read as a term, as `counted` is: "50 deliveries" counts "delivery".
    number = rf"(?:(?<![\w.-])\d[\d,.]*|{_NUMBER_WORDS.pattern})"
    counts = re.finditer(rf"{number}\s+(?P<words>(?:[a-z-]+\s+)?[a-z-]+)", text, re.IGNORECASE)
    return any(counted in content_terms(m.group("words")) for m in counts)


def asks_for_count(question: str) -> bool:
    """The question asks how many or how much, which no name's digits answer."""
    return bool(_ASKS_COUNT.search(question))


def states_number(text: str, counted: set[str] | frozenset[str] = frozenset(), *, names_count: bool = True) -> bool:
    """The text states a number: digits (outside a name's, unless `names_count`), a number in words, or none of
    what is `counted` (the question's words), or no limit or price."""
    digits = text if names_count else _NAME_WITH_DIGITS.sub(" ", text)
    if any(c.isdigit() for c in digits) or _NUMBER_WORDS.search(text):
        return True
    return any(content_terms(m.group(1)) & (counted | _LIMIT_WORDS) for m in _NONE_OF.finditer(text))


# "how many days a week", "how many requests per minute": a count by a period of time. Only periods of time: "how
# many seats per plan" is a count of another kind, which a table row states without "per plan".
_ASKS_RATE = re.compile(
    r"\bhow\s+many\s+([a-z]+)\s+(?:a|an|per|each|every)\s+(second|minute|hour|day|week|month|quarter|year)\b",
    re.IGNORECASE,
)


def asked_rate(question: str) -> tuple[str, str] | None:
    """The count's term and the period a question asks a rate of ("how many days a week": day, week); None for any
    other question."""
    match = _ASKS_RATE.search(question)
    terms = content_terms(match.group(1)) if match else set()
    return (next(iter(terms)), match.group(2).lower()) if match and len(terms) == 1 else None


_RATE_WORDS = re.compile(r"[a-z]+|/")
_PER = frozenset({"a", "an", "per", "each", "every", "/"})
_TIMES = frozenset({"once", "twice", "thrice"})  # "once per calendar year" says how many times a year


def states_rate(text: str, rate: tuple[str, str]) -> bool:
    """Whether a text states a count of the thing by the period asked: "30 days per calendar year" states days by the
    year, not by the week; "Requests per minute" (a table's header) states requests by the minute."""
    counted, period = rate
    words = _RATE_WORDS.findall(text.lower())
    for i, word in enumerate(words):
        if word not in _PER:
            continue
        after = words[i + 1 : i + 3]
        if after[:1] == ["calendar"]:
            after = after[1:]
        # The count and what it counts, within a clause's reach: "webhooks are limited to 50 deliveries per second".
        counts = words[max(0, i - 8) : i]
        if after[:1] in ([period], [period + "s"]) and any(
            counted in content_terms(w) or (counted == "time" and w in _TIMES) for w in counts
        ):
            return True
    return False
