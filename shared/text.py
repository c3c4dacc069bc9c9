"""Sentence boundaries that survive version numbers (v2.1.0), decimals (3.14), abbreviations and code."""

import functools
import re
from collections.abc import Iterator

import simplemma

# A blank line (spaces or tabs on it): where a paragraph ends in a message or a plain-text document.
PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")

_ABBREVIATIONS = {
    "e.g",
    "i.e",
    "etc",
    "vs",
    "cf",
    "dr",
    "mr",
    "mrs",
    "ms",
    "prof",
    "inc",
    "ltd",
    "co",
    "corp",
    "no",
    "fig",
    "approx",
    "dept",
    "est",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "u.s",
    "u.k",
    "e.u",
    "a.m",
    "p.m",
    "al",
    "st",
    "sec",
    "art",
    "para",
    "ref",
    "min",
    "max",
}
# A boundary candidate: terminal punctuation (plus closing quotes/brackets), then whitespace, then a
# capital, digit, quote or bracket. "3.14" and "v2.1.0" never match: no whitespace after their dots.
_CANDIDATE = re.compile(r"[.!?][\"'\)\]]*(\s+)(?=[A-Z0-9\"'\(\[`*])")
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans (absolute offsets) of the sentences in text[start:end]; together they cover every
    non-whitespace character of the range."""
    end = len(text) if end is None else end
    segment = text[start:end]
    spans, cursor = [], 0
    in_code = False
    for match in _CANDIDATE.finditer(segment):
        # Inline code spans (`...`) hold no sentence boundaries.
        in_code = segment.count("`", cursor, match.start()) % 2 == 1
        if in_code:
            continue
        before = segment[cursor : match.start() + 1]
        word = _LAST_WORD.search(before[:-1] if before.endswith(".") else "")
        if before.endswith(".") and word:
            token = word.group(1).lower().rstrip(".")
            if token in _ABBREVIATIONS or len(token) == 1:
                continue
        spans.append((cursor, match.start(1)))
        cursor = match.end(1)
    if segment[cursor:].strip():
        spans.append((cursor, len(segment.rstrip())))
    return [(start + a, start + b) for a, b in spans if segment[a:b].strip()]


# Contractions typed without their apostrophe ("dont", "cant"): the verb and its "not", as "don't" reads. Not
# "wont", a word of its own.
BARE_NEGATIONS = frozenset(
    "dont cant doesnt didnt isnt arent wasnt werent havent hasnt hadnt shouldnt wouldnt couldnt".split()
)
STOPWORDS = (
    frozenset(
        """
a an and are as at be been but by can could did do does for from had has have how i if in into is it its
me my of on or our should so than that the their them then there these they this to was we were what when
where which who whom why will with would you your about any after also all per not no yes just get got
whats hows whos wheres much many tell please pls need want wanna know vs versus thing things stuff
same anywhere anything anyone everyone everything everywhere whenever wherever whatever whoever somewhere
something someone must shall ought before between during via upon among throughout toward towards ahead
myself yourself himself herself itself ourselves yourselves themselves oneself
tells told telling say says said saying needs needed needing wants wanted wanting knowing gets getting
wat wut wht hw abt plz thx ur u r out like once ok okay
im ive youre theyre weve without possible possibly because
""".split()
    )
    | BARE_NEGATIONS
)
_TERM = re.compile(r"[a-z0-9]+(?:[-.][a-z0-9]+)*")


# Where simplemma's English table is wrong: "fixed" and "fixes" lemmatize to "fixe" (so "fix" never met them),
# British "-lled" forms keep both l's ("cancelled" to "cancell", not "cancel"), "gone" becomes "gan", "buying"
# stays "buying", and the superlative "latest" (most recent) becomes "late" (after a deadline: "latest version" is
# not a "late request").
_LEMMA_FIXES = {
    "fixe": "fix",
    "mixe": "mix",
    "prefixe": "prefix",
    "cancell": "cancel",
    "labell": "label",
    "modell": "model",
    "signall": "signal",
}
_WORD_FIXES = {"gone": "gone", "latest": "latest", "buying": "buy"}
# Words a policy and its readers use for one thing: "how long do you keep invoices" is answered by the "Retention
# period" column, "how long are logs retained" by "Application logs are kept for 90 days", "who approves a $3000
# refund" (and "whos my approver for a 1200 trip") by "require approval by ...", "japan pricing yen" by a price
# list's row for Japan, "can i rent a car" by "Rental cars are reimbursed at the compact class rate", "rejected job
# applicants data kept how long" by the "Job applications (not hired)" row, "outage postmortem due date" by "A
# post-incident review (PIR) ... is due within 7 calendar days" (an incident's postmortem is its post-incident review).
_SAME_AS = {
    "retain": "keep",
    "retention": "keep",
    "approval": "approve",
    "approver": "approve",
    "applicant": "application",
    "proration": "prorate",
    "postmortem": "postincident",
    "pricing": "price",
    "rental": "rent",
    "reimbursement": "reimburse",
    "payment": "pay",
    "flight": "fly",
}


@functools.lru_cache(maxsize=65536)
def _lemma(word: str) -> str:
    """The word's dictionary form, so an inflected verb meets its base ("kept" and "keep", "deleted" and "delete",
    "paid" and "pay"); the light stemming below only matches plurals. A lemma that is a stopword keeps the word
    ("us" is not "we")."""
    if word in _WORD_FIXES:
        return _WORD_FIXES[word]
    lemma = simplemma.lemmatize(word, lang="en").lower()
    lemma = _LEMMA_FIXES.get(lemma, lemma)
    lemma = _SAME_AS.get(lemma, lemma)
    return word if lemma in STOPWORDS or not lemma.isalpha() else lemma


_NAME_PLURAL = re.compile(r"[a-z][a-z-]*\d+s")


def _stem(word: str) -> str:
    """A word's dictionary form, then just enough stemming to match plurals and -ly adverbs; identifiers pass
    through. Not a Snowball stem: matching "approval" with "approves" and "expression" with "expressed" answered
    more sample questions but gave the SciFact claims one more false answer in 40 (README, "Answers, citations
    and abstention")."""
    if not word.isalpha():
        # The plural of a name ("P3s", "E-4412s") names the same thing: "do P3s need a PIR" asks about P3.
        return word[:-1] if _NAME_PLURAL.fullmatch(word) else word
    word = _lemma(word)
    if word.endswith("ly") and len(word) > 5:
        word = word[:-2]  # monthly -> month, yearly -> year
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


# Words as askers clip them ("3 yr deal", "24 hr support", "biz class"); only clips that mean nothing else.
_CLIPPED_WORDS = {
    "yr": "year",
    "yrs": "year",
    "hr": "hour",
    "hrs": "hour",
    "wk": "week",
    "wks": "week",
    "biz": "business",
    "ops": "operations",
    "incl": "include",
    "excl": "exclude",
}


# A dotted version written with its "v" ("v2.1.2") is the version ("what got fixed in 2.1.2"); "v2" alone is a name
# (API v2), not the number 2.
_PREFIXED_VERSION = re.compile(r"v\d+(?:\.\d+)+")


def _term(word: str) -> str:
    """One lower-cased word as a content term: a clipped word as the word, then stemmed. A hyphenated word
    of letters is the same word without its hyphens ("add-on" and "addon", "e-mail" and "email"); one with a digit
    is a name and stays whole (E-4412); a dotted version loses its "v" ("v2.1.2" is 2.1.2)."""
    if "-" in word and word.replace("-", "").isalpha():
        word = word.replace("-", "")
    if _PREFIXED_VERSION.fullmatch(word):
        return word[1:]
    if len(word) == 4 and word[3] == "s" and word[:3].isdigit():
        return word[:-1]  # status codes in the plural ("retry 503s"); four digits ("1990s") are a decade
    return _stem(_CLIPPED_WORDS.get(word, word))


# A contraction's or possessive's tail ("what's", "customer's", "we're", "i'll") says nothing the word before it does
# not, and "n't" is "not" ("don't", "can't", "won't"): read as separate words they were the terms "s", "re", "don",
# "t", which no question asks about and the passages hold only by their own possessives.
_CLITIC = re.compile(r"(?<=[a-z])['’](?:s|m|re|ll|ve|d)\b")
_NEGATION = re.compile(r"(?:\b(ca|wo|sha))?n['’]t\b")
_NEGATED = {"ca": "can", "wo": "will", "sha": "shall"}


# A number written with thousands separators is one number: "$1,500" is 1500, not the words "1" and "500" (which
# held the "1" of "tier 1").
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


# "own" after a possessive ("their own content", "my own car") only stresses whose a thing is; read as the verb's word,
# "delete their own content" held "who owns the data".
_EMPHATIC_OWN = re.compile(r"\b(my|your|his|her|its|our|their)\s+own\b")


# Chat shorthand written with a slash ("w/ nonprofit discount", "b/c we're a school"): the word it stands for. Read
# as letters, "w", "b" and "c" were question words no passage holds, weighing as much as the rarest word asked.
_SLASHED_SHORTHAND = re.compile(r"(?<![\w/])(w/o|w/|b/c)(?![\w/])")
_SHORTHAND_WORDS = {"w/o": "without", "w/": "with", "b/c": "because"}


def _words(text: str) -> list[str]:
    """The lower-cased words of a text, contractions read as their words ("don't": do not), a number with thousands
    separators as one ("1,500": 1500)."""
    text = text.lower()
    if "'" in text or "’" in text:
        text = _CLITIC.sub("", text)
        text = _NEGATION.sub(lambda m: f"{_NEGATED.get(m.group(1) or '', '')} not", text)
    if "," in text:
        text = _THOUSANDS.sub("", text)
    if " own" in text:
        text = _EMPHATIC_OWN.sub(r"\1", text)
    if "/" in text:
        text = _SLASHED_SHORTHAND.sub(lambda m: _SHORTHAND_WORDS[m.group(1)], text)
    if _PHRASAL_HINT.search(text):  # a cheap scan first: most texts hold none of the verbs
        text = _PHRASAL.sub(_as_one_word, text)
    return _TERM.findall(text)


# A verb and its particle that name an event the documents name in one word: "my job timed out" is a "Job timeout",
# "sign in" a "sign-in". Not "log in", as often a noun and a preposition ("the error log in the dashboard"); nor "back
# up" and "set up", whose nouns name a thing: "how do i back up my data" was answered with how long backups are kept.
_PHRASAL_NOUNS = {
    ("time", "out"): "timeout",
    ("sign", "in"): "signin",
    ("shut", "down"): "shutdown",
    ("fail", "over"): "failover",
    ("roll", "back"): "rollback",
    ("sign", "off"): "approve",  # "who signs off on a refund over 5k": who approves it
    ("kick", "in"): "effect",  # "how fast does extra storage kick in": "which takes effect within 5 minutes"
}
_PHRASAL_FORMS = {
    form: verb
    for verb, forms in {
        "time": "time times timed timing",
        "sign": "sign signs signed signing",  # not "signs in", as often a noun ("signs in patients"): _NOUN_PHRASES
        "shut": "shut shuts shutting",
        "fail": "fail fails failed failing",
        "roll": "roll rolls rolled rolling",
        "kick": "kick kicks kicked kicking",
    }.items()
    for form in forms.split()
}
_PARTICLES = "|".join(sorted({particle for _, particle in _PHRASAL_NOUNS}))
# Each verb's stem without a final e ("tim" of "timed", "timing"): a scan cheaper than _PHRASAL's list of forms.
_PHRASAL_HINT = re.compile(rf"(?:{'|'.join(verb.rstrip('e') for verb, _ in _PHRASAL_NOUNS)})\w*\s+(?:{_PARTICLES})\b")
_PHRASAL = re.compile(rf"\b({'|'.join(_PHRASAL_FORMS)})\s+({_PARTICLES})\b")


# A form and particle that are a noun and a preposition, not the verb: "signs in neuropathic pain".
_NOUN_PHRASES = {("signs", "in")}


def _as_one_word(match: re.Match) -> str:
    if (match.group(1), match.group(2)) in _NOUN_PHRASES:
        return match.group(0)
    return _PHRASAL_NOUNS.get((_PHRASAL_FORMS[match.group(1)], match.group(2)), match.group(0))


def content_terms(text: str) -> set[str]:
    """Lower-cased, lightly stemmed words minus stopwords; identifiers like e-4412 or v2.1.0 stay whole, and a
    clipped unit word ("yr") counts as the word."""
    return {_term(w) for w in _words(text) if w not in STOPWORDS}


# "how long", "how often": the word after "how" names the kind of answer (a duration, a frequency), not what the
# question is about; "as long as the account is active" does not answer "how long do we keep invoices".
_HOW_MEASURE = re.compile(
    r"\bhow\s+(long|often|soon|far|fast|quick|quickly|frequent|frequently|old|big|large|early|late|high|low)\b"
)


def names_nothing(terms: set[str]) -> bool:
    """Whether a question's content terms leave nothing to look for: none at all ("what is it"), or only numbers
    of one or two digits ("1", "' or 1=1 --"), which name a thing only beside a word that says what ("tier 1")."""
    return all(term.isdigit() and len(term) <= 2 for term in terms)


# "when do i have to submit my expenses", "by when must we pay": the question asks for a deadline, as "expense
# deadline" does, so it is read with that word (a unit stating a time limit holds it: shared.quantities); in "when is
# the expense report due" and "postmortem due date" the deadline is what "due" (and its "date") says.
_ASKS_DUE = re.compile(r"\bwhen\s+(?:is|are|was|were|will)\b.*\bdue\b(?!\s+to\b)|\bdue\s+date\b")
_ASKS_DEADLINE = re.compile(r"\b(?:by\s+)?when\b.*\b(?:have|has|had|need|needs)\s+to\b|\b(?:by\s+)?when\b.*\bmust\b")
# "how far in advance", "how early", "how long before": the question asks how long before something it must be done,
# a time limit ("at least 14 days before departure"), as "by when" does; "advance" is no word of its answer.
_ASKS_LEAD_TIME = re.compile(
    r"\bhow\s+(?:far\s+(?:in\s+advance|ahead)|early|long\s+(?:in\s+advance|before(?:hand)?))\b"
)


# "what happened with ticket 10231", "what's happening with the pixelmint import": what a thing is about, in which
# "happen" is no word of the answer. Not "what happens if ...", which asks for a consequence.
_ASKS_WHAT_HAPPENED = re.compile(
    r"\bwhat(?:'?s|\s+is|\s+has)?\s+(?:happened|happening|going\s+on)\s+(?:with|to|in|on)\b"
)


def question_terms(question: str) -> set[str]:
    """The content terms of a question, less the measure word of a "how long"/"how often" question (unless the
    question uses the word again, as in "how long is the long-haul allowance"), with "deadline" for a question asking
    by when something must be done."""
    terms = content_terms(question)
    lowered = question.lower()
    if _ASKS_LEAD_TIME.search(lowered):
        terms -= {"advance", "ahead", "beforehand"}
        terms.add("deadline")
    elif _ASKS_DEADLINE.search(lowered):
        terms.add("deadline")
    elif _ASKS_DUE.search(lowered):
        # "when is the expense report due": "due" is the deadline asked for, which a unit stating a time limit holds
        # ("Expenses must be submitted ... within 30 days"); read as both, a question about what no passage holds
        # ("when is rent due") would be half held by any time limit.
        terms -= {"due", "date"} if "due date" in lowered else {"due"}
        terms.add("deadline")
    if _ASKS_WHAT_HAPPENED.search(lowered):
        terms -= {"happen", "go"}  # "what happened with ticket 10231" asks what it is about, as "what was ... about"
    for match in _HOW_MEASURE.finditer(lowered):
        word = match.group(1)
        if _written_once(word, lowered):
            terms.discard(_term(word))
    if _BACK_PARTICLE.search(lowered) and _written_once("back", lowered):
        terms.discard("back")
    if _HOW_LONG_LAST.search(lowered):
        terms.discard("last")
    return terms


def _written_once(word: str, text: str) -> bool:
    """Whether the text writes the word once, as a word ("back" in "backup" is not it)."""
    return len(re.findall(rf"\b{word}\b", text)) == 1


# "how long does the discount last" asks for a span, as "how long is the discount" does: "last" is the question's
# verb, which no unit stating the span ("for the first 12 months") says. Only as the verb, ending its clause: not
# "the last invoice", "last year".
_HOW_LONG_LAST = re.compile(
    r"\bhow\s+long\s+(?:does|do|did|will|would|can|should)\s+.+?\blast\b"
    r"(?=\s*(?:$|[?.,;!]|(?:after|for|in|on|before|until|till|beyond|once|when|if)\b))"
)


# "back" after a verb is its particle ("when do i get paid back", "will my refund come back in dollars"): no unit
# saying how it is paid says "back". Not "back up", a verb of its own.
_BACK_PARTICLE = re.compile(r"\b(?:paid|pay|pays|paying|come|comes|coming|came|get|gets|getting|got)\s+back\b")


def _adjacent_terms(text: str) -> Iterator[tuple[str, str]]:
    """Each content term of the text with the content term written just before it, in order ("data engineer":
    ("engineer", "data")); a term after a stopword or a number has none and is not given."""
    before = ""
    for word in _words(text):
        if word in STOPWORDS or not word.isalpha():
            before = ""
            continue
        term = _term(word)
        if before:
            yield term, before
        before = term


def word_modifiers(text: str) -> dict[str, str]:
    """Each content term of the text with the content term written just before it ("data engineer": {"engineer":
    "data"}), the first where it is written twice; a term after a stopword or a number has none."""
    out: dict[str, str] = {}
    for term, before in _adjacent_terms(text):
        out.setdefault(term, before)
    return out


def modifier_pairs(text: str) -> set[tuple[str, str]]:
    """Every (term, the content term written just before it) of a text: ("log", "incident") for "incident logs"."""
    return set(_adjacent_terms(text))


# The words that qualify a thing by its period ("monthly plan", "daily backups"), each with the period it names:
# things of one kind qualified by different periods exclude each other.
_PERIOD_ADJECTIVES = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter"}
_PERIOD_ADJECTIVES |= {"yearly": "year", "annual": "year", "annually": "year"}
# A period named as a rate ("billed per month", "once a year").
_PERIOD_RATE = re.compile(r"\b(?:per|a|an|each|every)\s+(hour|day|week|month|quarter|year)\b")


def periods_named(text: str) -> set[str]:
    """The periods a text qualifies something by or states a rate per ("monthly", "per month": month); a measure
    ("30 days") names none."""
    lowered = text.lower()
    return {_PERIOD_ADJECTIVES[w] for w in _words(lowered) if w in _PERIOD_ADJECTIVES} | set(
        _PERIOD_RATE.findall(lowered)
    )


def period_qualified(text: str) -> dict[str, str]:
    """Each word a text qualifies by the period word written just before it, with the period: {"plan": "month"}
    for "a monthly plan", {"backup": "day"} for "Daily backups". Read on the words as written, not through
    _adjacent_terms: stemmed, "monthly" is "month", and "a 12 month term" would read as a monthly one."""
    words = _words(text)
    return {
        _term(word): _PERIOD_ADJECTIVES[before]
        for before, word in zip(words, words[1:], strict=False)
        if before in _PERIOD_ADJECTIVES and word not in STOPWORDS and word not in _PERIOD_ADJECTIVES
    }


def term_words(text: str) -> dict[str, str]:
    """Each content term of the text and the word it was first written as ("keep": "kept")."""
    words: dict[str, str] = {}
    for word in _words(text):
        if word not in STOPWORDS:
            words.setdefault(_term(word), word)
    return words


# A number joined to its unit word ("3-year", "14-day").
_NUMBER_UNIT = re.compile(r"(\d+(?:\.\d+)?)-([a-z]+)")


def with_number_units(terms: set[str]) -> set[str]:
    """The terms, and for a number joined to its unit word ("3-year") the number and the word as well: "3 yr
    deal" asks about a "3-year agreement". Not part of content_terms, so a "3-year" stays one identifier where
    identifiers are matched exactly (the reranker's identifier match)."""
    out = set(terms)
    for term in terms:
        joined = _NUMBER_UNIT.fullmatch(term)
        if joined:
            out |= {joined.group(1), _term(joined.group(2))}
    return out


# Small numbers written in words; read as digits only before a unit of time (_NUMBER_WORD), so "one" in "which one"
# stays a word.
_SMALL_NUMBERS = {
    word: str(value)
    for value, word in enumerate(
        ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"), start=1
    )
}
# A number of units of time, not joined by a hyphen to another word ("two-factor" is a name). Only of time: "two
# discounts" or "five seats" in words is no number the answering passage must write ("can i combine two
# discounts"), and "five" is not the "$5" of a price.
_NUMBER_WORD = re.compile(
    rf"(?<![\w-])({'|'.join(_SMALL_NUMBERS)})(?=\s+(?:second|minute|hour|day|week|month|quarter|year)s?\b)",
    re.IGNORECASE,
)


# A prefix a question writes apart from its word ("non solicitation", "multi year deal") is part of it, as the
# documents write it with a hyphen ("Non-Solicitation", "MULTI-YEAR COMMITMENTS"), which reads as one word. Read
# apart, "non" was a clip of "nonconformity" and answered "non solicitation" with acceptance clauses. Not "pre":
# "pre approval" is an approval, which "approved by the employee's direct manager" speaks of too.
_SPACED_PREFIX = re.compile(r"\b(non|anti|multi)\s+(?=[a-z]{3,})", re.IGNORECASE)


def with_prefixes_joined(question: str) -> str:
    """The question with each prefix written apart joined to its word ("non solicitation" -> "nonsolicitation")."""
    return _SPACED_PREFIX.sub(r"\1", question)


def numbers_in_digits(question: str) -> str:
    """The question with its small numbers of units of time in digits ("three year deal" -> "3 year deal"), so that
    it meets a "3-year agreement" and reads "two weeks" as the span it is."""
    return _NUMBER_WORD.sub(lambda m: _SMALL_NUMBERS[m.group(1).lower()], question)


# A word of letters joined by hyphens: "max-retries", "on-call", "pro-apoptotic".
_COMPOUND = re.compile(r"\b[A-Za-z]+(?:-[A-Za-z]+)+\b")


def compound_parts(text: str, wanted: set[str]) -> set[str]:
    """The question's words (`wanted`) that the text's hyphenated words hold when read apart, each compound only
    when the question has all its parts: a document's `--max-retries` holds "max retries", "fixed-fee" holds
    "fixed fee" (content_terms reads each as one word, as it does "max-retries" in a question). A part alone is
    not the compound: "pro-apoptotic" does not hold "apoptotic", nor "anti-apoptotic". But a compound that says
    what it is about, "usage-based" or "security-related", holds that word: "are usage charges refundable" is
    answered by "Usage-based charges are not refundable"."""
    held: set[str] = set()
    if "-" not in text:
        return held
    for compound in _COMPOUND.findall(text):
        words = compound.lower().split("-")
        if len(words) == 2 and words[1] in _ABOUT_SUFFIXES:
            held |= content_terms(words[0]) & wanted
        # As a question reads it apart: "three-year" is "3 year" (numbers_in_digits).
        parts = content_terms(numbers_in_digits(compound.replace("-", " ")))
        if parts and parts <= wanted:
            held |= parts
    return held


# The second word of a compound about its first: "usage-based", "security-related", "plan-specific".
_ABOUT_SUFFIXES = frozenset({"based", "related", "specific"})


_LIST_ITEM = re.compile(r"^([-*+]|\d+[.)])\s")


# The rule line under a table's header row: | --- | :---: | ---: | (or a bare --- line), three hyphens a
# cell at least. The one definition: the chunker finds tables with it, the generator finds header rows.
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")


def is_table_rule(line: str) -> bool:
    """True for a table rule line (| --- | :---: |) or a bare --- line; a line break at either end is ignored."""
    return bool(_TABLE_RULE.match(line.strip("\r\n")))


def is_table_header(body: str, row_end: int) -> bool:
    """True when the line after the row ending at `row_end` is a table rule: the row is a header."""
    return is_table_rule(body[row_end:].lstrip("\r\n").split("\n", 1)[0])


def table_header_before(body: str, row_start: int) -> str:
    """The header row of the table row starting at `row_start`: the nearest row above it that a rule line
    follows, within the same table ('' when there is none: the row is not in a table with a header)."""
    lines = body[:row_start].rstrip("\r\n").split("\n")
    for i in range(len(lines) - 1, 0, -1):
        if not lines[i].strip().startswith("|"):
            return ""
        if is_table_rule(lines[i]):
            header = lines[i - 1].strip()
            return header if header.startswith("|") else ""
    return ""


def table_cells(row: str) -> list[str]:
    """A Markdown table row's cells, stripped (an escaped pipe stays inside its cell)."""
    cells = re.split(r"(?<!\\)\|", row.strip())
    if cells and not cells[0].strip():
        cells = cells[1:]
    if cells and not cells[-1].strip():
        cells = cells[:-1]
    return [c.strip() for c in cells]


def row_siblings(bodies: list[str]) -> dict[str, set[str]]:
    """For each name a table gives a row (a first cell of one word: "Starter", "Team", "Business" in a price list's
    Plan column), the names of the table's other rows: the things of the same kind the table sets side by side."""
    siblings: dict[str, set[str]] = {}
    for body in bodies:
        if "|" not in body:
            continue
        lines = body.split("\n")
        i = 0
        while i < len(lines):
            if not (i + 1 < len(lines) and lines[i].lstrip().startswith("|") and is_table_rule(lines[i + 1])):
                i += 1
                continue
            names: set[str] = set()
            i += 2  # the rows under the header and its rule
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = table_cells(lines[i])
                terms = content_terms(cells[0]) if cells else set()
                if len(terms) == 1:
                    names |= terms
                i += 1
            if len(names) > 1:
                for name in names:
                    siblings.setdefault(name, set()).update(names - {name})
    return siblings


def read_row(header: str, row: str) -> str:
    """A table row as a reader takes it in, each cell under its column's name: "Plan: Team; Monthly price:
    $79; ...", empty cells left out. The row as it is when the header's cells do not line up with it."""
    names, cells = table_cells(header), table_cells(row)
    if not header or len(names) != len(cells) or not all(names):
        return row.strip()
    return "; ".join(f"{name}: {cell}" for name, cell in zip(names, cells, strict=True) if cell)


# An e-mail's header block as it appears in a ticket or thread ("From: ... Date: ... Subject: ...").
_MESSAGE_HEADER = re.compile(r"(From|To|Cc|Bcc|Date|Sent|Subject|Reply-To): \S")


def is_message_header(text: str) -> bool:
    """True for a unit that is a message's header lines: who wrote when, under which subject. It names the
    topic, so it matches questions about it, but it answers none of them."""
    return bool(_MESSAGE_HEADER.match(text.lstrip()))


# A ticket's record header: "Ticket #10611" and its fields ("Status: Solved", "Plan: Team", "Customer: ...").
_RECORD_TITLE = re.compile(r"(?:ticket|case|request|incident)\s*#\s*\d+\s*$", re.IGNORECASE)
_RECORD_FIELD = re.compile(r"([A-Za-z][A-Za-z ]{0,30}):\s*\S")


# A record named by its kind and number ("ticket 10611", "Ticket #10231", "case no. 884").
_RECORD_NUMBER = re.compile(r"\b(ticket|case|request|incident)s?\s*(?:#|no\.?|number)?\s*(\d{3,})\b", re.IGNORECASE)


def record_numbers(text: str) -> dict[str, set[str]]:
    """The records a text names, by kind: {"ticket": {"10611"}} for "what did the clinic buy (ticket 10611)"."""
    found: dict[str, set[str]] = {}
    for kind, number in _RECORD_NUMBER.findall(text):
        found.setdefault(kind.lower(), set()).add(number)
    return found


def names_another_record(asked: dict[str, set[str]], title: str) -> bool:
    """Whether a document's title names a record of a kind the question asks about, and not the one it asks:
    "Ticket 10231 - Sync keeps failing" for "what did the clinic buy (ticket 10611)"."""
    return any(kind in asked and not numbers & asked[kind] for kind, numbers in record_numbers(title).items())


def _record_fields(text: str) -> list[tuple[str, str]] | None:
    """Each field of a unit that is a ticket's record header ("Ticket #10611 / Status: Solved / Plan: Team"), as its
    name and value; None for any other unit."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) < 2 or not _RECORD_TITLE.match(lines[0]):
        return None
    fields = [_RECORD_FIELD.match(line) for line in lines[1:]]
    if not all(fields):
        return None
    return [(f.group(1), f.string[f.end(1) + 1 :]) for f in fields if f]


def record_header_fields(text: str) -> set[str] | None:
    """The field names' terms of a unit that is a ticket's record header; None for any other unit. The header
    answers a question about one of its fields ("what plan is ticket 10611 on"), not one that only names the ticket
    ("ticket 10611 what was the problem")."""
    fields = _record_fields(text)
    return None if fields is None else set().union(*(content_terms(name) for name, _ in fields))


# The fields of a record's header that say whom the record is about.
_SUBJECT_FIELDS = frozenset({"customer", "company", "account", "organisation", "organization", "client"})


def record_subject(text: str) -> set[str]:
    """The terms of whom a ticket's record header says the record is about ("Customer: Brightside Dental Group":
    brightside, dental, group); empty for any other unit. Every message of the record is about them."""
    fields = _record_fields(text) or []
    return set().union(*(content_terms(value) for name, value in fields if content_terms(name) & _SUBJECT_FIELDS))


# A sentence that sends the reader elsewhere ("See the discounts document for other programs.", "For details, refer
# to the MSA.") or says what its document covers ("This policy defines how long ... keeps data", "This FAQ answers
# common questions about claiming business expenses"). Contacting
# someone is an answer ("For refunds, contact billing@..."), and so is what a document applies to.
_SIGNPOST = re.compile(
    r"^\W*(?:for\b[^,.;]{0,60},\s*)?(?:please\s+)?(?:see|refer to|consult)\b"
    r"|^\W*this (?:policy|document|guide|page|section|manual|handbook|runbook|faq|reference|article)\s+"
    r"(?:defines|describes|explains|covers|outlines|sets out|summari[sz]es|lists|documents|answers)\b"
    r"|^\W*it\s+(?:defines|describes|explains|outlines|summari[sz]es)\b",  # "It explains when ... refunds ..."
    re.IGNORECASE,
)


def is_signpost(text: str) -> bool:
    """True for a unit that points to another place or describes its own document: it shares the question's
    words (it names the topic) but does not answer; another unit that holds fewer of them may."""
    return bool(_SIGNPOST.match(text.lstrip(" \t-*+>")))


# A yes/no question opens with its auxiliary verb: "is there a free trial for starter", "do P3s need a PIR".
_POLAR_QUESTION = re.compile(
    r"^\W*(?:is|are|was|were|am|do|does|did|can|could|will|would|should|shall|must|may|has|have|had)\b", re.IGNORECASE
)


def is_polar_question(text: str) -> bool:
    """True for a question answered yes or no ("can team get a dedicated region"), which a sentence saying what
    else something applies to answers too: "Team and Business plans include a free trial" says no for Starter. A
    question that drops its verb is one too when it asks nothing else: "scim on starter?", "onboarding package
    refundable?" (three words or more; "refund window?" names a topic)."""
    if _POLAR_QUESTION.match(text):
        return True
    return is_question(text) and not _WH_WORD.search(text) and len(text.split()) >= 3


_WH_WORD = re.compile(r"\b(?:what|whats|when|where|who|whom|whos|which|why|how|hows)\b", re.IGNORECASE)


def is_question(text: str) -> bool:
    """True for a unit that asks ("Can we get a refund for the Business renewal?" in a ticket): it shares the words
    of a question about the same thing and answers none; like a signpost, it answers only when no other unit does."""
    return text.rstrip().endswith("?")


def is_heading_line(text: str, heading_path: list[str]) -> bool:
    """True for a unit that is its section's heading: a Markdown "## ..." line, or a plain-text heading ("1. ANNUAL
    PREPAY") as the path names it. It restates the path, so it never answers."""
    text = " ".join(text.split())
    return text.startswith("#") or any(text == " ".join(h.split()) for h in heading_path)


def is_list_item(text: str) -> bool:
    return bool(_LIST_ITEM.match(text.lstrip()))


def without_list_marker(text: str) -> str:
    """The text without its list marker ("- ", "2. ") and the space after it."""
    text = text.lstrip()
    return _LIST_ITEM.sub("", text, count=1).lstrip()


# What joins the things a heading names side by side: "Internet and phone", "Meals, hotels & taxis".
_HEADING_JOIN = re.compile(r"\s*(?:,|&|\band\b)\s*", re.IGNORECASE)


_SECTION_NUMBER = re.compile(r"\d+(?:\.\d+)*")


def heading_conjuncts(heading: str) -> list[set[str]]:
    """The content terms of each thing a heading names side by side ("Internet and phone": internet; phone); empty
    for a heading naming one thing. Under such a heading a unit is about one of them."""
    # A section's number ("7. Term and Termination") is none of them.
    parts = [
        {t for t in content_terms(part) if not _SECTION_NUMBER.fullmatch(t)} for part in _HEADING_JOIN.split(heading)
    ]
    parts = [part for part in parts if part]
    return parts if len(parts) > 1 else []


# The name a list item opens with, before its colon ("- Application logs: 90 days."): a few words, no sentence.
_ITEM_NAME = re.compile(r"([A-Za-z][A-Za-z -]{0,48}):\s")
_ITEM_NAME_WORDS = 6


def item_name(unit: str) -> str:
    """The name a unit gives what it is about, where it opens with one: a table row's first cell, a list item's
    words before its colon ("Application logs" in "- Application logs: 90 days."); "" for any other unit."""
    text = unit.strip()
    if text.startswith("|"):
        cells = table_cells(text)
        return cells[0] if cells else ""
    match = _ITEM_NAME.match(without_list_marker(text)) if is_list_item(text) else None
    return match.group(1) if match and len(match.group(1).split()) <= _ITEM_NAME_WORDS else ""


def _line_kind(stripped: str) -> str:
    if not stripped:
        return "blank"
    if stripped.startswith("```"):
        return "fence"
    if is_table_rule(stripped):
        return "rule"  # a table rule (| --- |) or a thematic break
    if stripped.startswith(("|", "#")):
        return "line"  # a table row or a heading: one unit each
    if _LIST_ITEM.match(stripped):
        return "item"
    return "prose"


def answer_units(text: str) -> list[tuple[int, int]]:
    """Quotable units of a passage, following its structure rather than its physical lines: a table row
    or a heading is one line; a list item runs until the next item or a blank line (its wrapped lines
    included); in fenced code each line is a unit; prose is split into sentences across hard line
    breaks, so a wrapped sentence is one unit, never cut at the end of a line."""
    units: list[tuple[int, int]] = []
    block: list[int] = []  # [start, end, is_item] of the open prose paragraph or list item
    in_code = False

    def close():
        if block:
            start, end, is_item = block
            units.extend([(start, end)] if is_item else sentence_spans(text, start, end))
            block.clear()

    pos = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        start = pos + len(line) - len(line.lstrip())
        end = pos + len(line.rstrip())
        pos += len(line)
        kind = _line_kind(stripped)
        if kind == "fence" or in_code:
            close()
            if kind == "fence":
                in_code = not in_code
            elif stripped:
                units.append((start, end))
            continue
        if kind == "prose" and block:
            block[1] = end  # a wrapped line continues the paragraph or list item
            continue
        close()
        if kind == "line":
            units.append((start, end))
        elif kind in ("prose", "item"):
            block.extend([start, end, kind == "item"])
    close()
    return units


def chunk_words(chunk) -> str:
    """Every word a passage shows its reader: its document's title, its heading path, its body (a protobuf Chunk
    or a shared.model one). What the misspelling reader and the coverage features read a passage as."""
    return " ".join([chunk.meta.title, *chunk.heading_path, chunk.body])


def title_and_heading_terms(chunk) -> set[str]:
    """The content terms of a passage's document title and heading path: what the passage is about."""
    return content_terms(" ".join([chunk.meta.title, *chunk.heading_path]))


def heading_prefix(title: str, path: list[str]) -> str:
    parts = [p for p in [title, *path] if p]
    if len(parts) > 1 and parts[0].strip().lower() == parts[1].strip().lower():
        parts = parts[1:]
    return " > ".join(parts)


def scoring_views(heading_path: list[str], body: str, limit: int = 48) -> list[tuple[str, int]]:
    """Short texts a bi-encoder can match a question against, one claim each, with the index (into
    answer_units(body)) of the unit each one reads, -1 for the section title: the title, each sentence or
    list item under it, and for a table row its key with each column ("Team — Monthly price: $79").
    Long concatenations dilute the similarity, so none are built."""
    leaf = heading_path[-1] if heading_path else ""
    views = [(leaf, -1)] if leaf else []
    header = None
    for index, (start, end) in enumerate(answer_units(body)):
        text = body[start:end].strip()
        if is_heading_line(text, heading_path):
            continue
        if text.startswith("|"):
            if is_table_header(body, end):
                header = table_cells(text)  # a header row, announced by the rule line after it
                continue
            cells = table_cells(text)
            if header and cells:
                key = cells[0]
                views.append(("; ".join(f"{h}: {c}" for h, c in zip(header[:3], cells[:3], strict=False)), index))
                views += [(f"{key} — {h}: {c}", index) for h, c in zip(header[1:], cells[1:], strict=False) if c]
                continue
        text = " ".join(text.split())  # a wrapped sentence reads as one line
        views.append((f"{leaf}: {text}" if leaf else text, index))
    return views[:limit]


_WORD = re.compile(r"[A-Za-z]+")


def acronyms(names: list[str]) -> set[str]:
    """What a reader abbreviates each multi-word name to, as content terms: the initials of its words, small ones
    included ("Master Services Agreement" -> msa, "Statement of Work" -> sow), 2 to 5 letters."""
    out: set[str] = set()
    for name in names:
        words = _WORD.findall(name)
        if 2 <= len(words) <= 5:
            out |= content_terms("".join(w[0] for w in words))
    return out


# Small words a proper name may hold without being capitalised ("Statement of Work", "Bank of England").
_NAME_CONNECTORS = frozenset({"of", "and", "for", "the", "de"})
# Words and spaces only: a list ("Card, Bacs") or an amount is not a name.
_NAME_CELL = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)+")


def cell_acronyms(row: str) -> set[str]:
    """The abbreviations of a table row's cells that are proper names ("European Union" -> eu, "United Kingdom" ->
    uk): a reader asks about "uk payment methods", the table writes the name out. A cell of ordinary words
    ("Card, SEPA direct debit") is not a name and abbreviates to nothing."""
    names = []
    for cell in table_cells(row):
        words = _WORD.findall(cell)
        if _NAME_CELL.fullmatch(cell) and all(w[0].isupper() or w in _NAME_CONNECTORS for w in words):
            names.append(cell)
    return acronyms(names)


def header_acronyms(header: str) -> set[str]:
    """The initials of a table header's columns named in three to five words ("Requests per minute" -> rpm): a
    reader asks "starter rpm", the header writes it out. Not two: "Monthly price" is no "mp"."""
    return acronyms([cell for cell in table_cells(header) if len(_WORD.findall(cell)) >= 3])


# A proper name written out in running text: two to five capitalised words, a name's small connectors between them
# ("San Francisco", "Bank of England"), but not "and", which in running text lists names ("London and Tokyo").
_RUNNING_CONNECTORS = "|".join(sorted(_NAME_CONNECTORS - {"and"}))
_RUNNING_NAME = re.compile(rf"\b[A-Z][a-z]+(?:\s+(?:(?:{_RUNNING_CONNECTORS})\s+)?[A-Z][a-z]+){{1,4}}\b")


def name_acronyms(text: str) -> set[str]:
    """The abbreviations of the proper names a text writes out ("San Francisco" -> sf, "People Operations" -> po):
    a reader asks about "the hotel cap in sf". Only words capitalised after their first letter and no further
    (a shouted "NOTE THAT" or a code "EU-WEST" is no name written out)."""
    return acronyms(_RUNNING_NAME.findall(text))


# Words written one after another, only spaces or a hyphen between them ("multi-factor authentication").
_PHRASE_RUN = re.compile(r"[A-Za-z]+(?:(?: |-)[A-Za-z]+)*")


def phrase_initials(text: str, wanted: set[str]) -> set[str]:
    """The wanted words of three to five letters that are the initials of as many words the text writes one after
    another, in any case, the first and the last no stopword: "mfa" for "multi-factor authentication", "rpm" for
    "requests per minute", "sso" for "single sign-on". For words no name abbreviates (name_acronyms) because the
    text writes them in lower case; the caller asks only for words that are no English word. Not two letters: two
    words written one after another begin with any two letters too often ("sf" and "shared files")."""
    wanted = {w for w in wanted if 3 <= len(w) <= 5 and w.isalpha()}
    if not wanted:
        return set()
    found: set[str] = set()
    for run in _PHRASE_RUN.findall(text):
        parts = re.split(r"( |-)", run.lower())
        words, joined = parts[::2], [False, *(sep == "-" for sep in parts[1::2])]
        for i, first in enumerate(words):
            if first in STOPWORDS:
                continue
            for size in range(3, min(5, len(words) - i) + 1):
                end = i + size - 1
                initials = "".join(w[0] for w in words[i : end + 1])
                # A compound's last part may be a small word ("sign-on"), a phrase's last word not ("is in").
                if initials in wanted and (words[end] not in STOPWORDS or joined[end]):
                    found.add(initials)
    return found


def abbreviated_terms(wanted: set[str], terms: set[str]) -> set[str]:
    """The wanted terms among the words of a table header (`terms`), written shorter as a clipped word ("ack" for
    a column headed "Acknowledge", "cancel" for "cancellation"), or as the doing of a column headed by its doer
    ("own" for "Owner"). A clip has 3 letters at least and drops 3 at least, so "use" does not stand for "user"."""
    shorter = {w for w in wanted - terms if w.isalpha() and len(w) >= 3}
    clipped = {w for w in shorter if any(len(t) >= len(w) + 3 and t.startswith(w) for t in terms)}
    # A column headed by who does a thing ("Owner", "Reviewer") answers who does it ("which team owns ..."); not
    # by a silent e's "r" ("User" is no answer to "can i use ...").
    doers = {w for w in shorter if w + "er" in terms}
    return (wanted & terms) | clipped | doers


def clipped_terms(wanted: set[str], terms: set[str]) -> set[str]:
    """The wanted terms that clip a dictionary word among `terms` to less than half its letters: "app" for
    "application", "env" for "environment", "prod" for "production". Stricter than a header's clips
    (abbreviated_terms): a sentence's words are many, and a shorter head is more often the start of another word
    ("use" of "useful") or of a squashed name ("use" of "us-east")."""
    clips = {w for w in wanted - terms if len(w) >= 3 and w.isalpha()}
    if not clips:
        return set()
    # Each term's heads short enough to be clips of it, looked up: fewer steps than each clip against each term.
    return {
        t[:size]
        for t in terms
        if len(t) >= 7
        for size in range(3, (len(t) - 1) // 2 + 1)
        if t[:size] in clips and simplemma.is_known(t, lang="en")
    }


def cell_demonyms(row: str) -> set[str]:
    """What a reader calls the people or things of a one-word place a table row's cell names ("India" -> indian,
    "Japan" -> japanese, "Europe" -> european): "can indian customers pay by UPI" asks about the India row. Regular
    forms only, so an irregular one ("France", french) is not matched; a cell that is no place yields words no
    question uses."""
    forms: list[str] = []
    for cell in table_cells(row):
        if not (cell.isalpha() and cell[0].isupper() and cell[1:].islower()):  # "India", not a code ("INR")
            continue
        name = cell.lower()
        if name.endswith("a"):
            forms.append(name + "n")
        elif name.endswith("e"):
            forms.append(name + "an")
        else:
            forms += [name + "ian", name + "ese"]
    return content_terms(" ".join(forms))


# An e-mail address: in a message's heading ("Message 4 from Ben Ortiz <support@...>") it says who wrote, not what
# the message is about or names.
_EMAIL_ADDRESS = re.compile(r"<?[\w.+-]+@[\w.-]+>?")


def message_heading(number: int, sender: str) -> str:
    """The section name of one message of a thread (ticket threads and e-mail alike, as the chunker writes them)."""
    return f"Message {number} from {sender}"


def is_message_heading(heading: str) -> bool:
    """Whether a section heading is one message of a thread, as message_heading names it."""
    return bool(_MESSAGE_HEADING.match(heading))


_MESSAGE_HEADING = re.compile(r"Message \d+ from ")


def without_message_number(heading: str) -> str:
    """A message's heading without its place in the thread ("Message 3 from Dr. Priya Nair" -> "Message from Dr.
    Priya Nair"): the 3 counts messages, it is no number the message states ("how much is 3 TB of extra storage"
    was answered with message 3's "We added 2 TB of Extra Storage")."""
    return _MESSAGE_HEADING.sub("Message from ", heading, count=1)


def without_addresses(text: str) -> str:
    """The text with each e-mail address blanked out."""
    return _EMAIL_ADDRESS.sub(" ", text)


# "per year", "a year", "each year", "yearly": a rate by the year, which "annual" states. Not "at 1 year" or
# "14 years old": a point in time or an age is not a rate.
_PER_YEAR = re.compile(r"\b(?:per|a|an|each|every)\s+year\b|\byearly\b", re.IGNORECASE)
_ANNUAL = re.compile(r"\bannual(?:ly)?\b", re.IGNORECASE)


def asks_per_year(question: str) -> bool:
    """Whether a question asks for a rate by the year ("how much is business per year", "yearly price")."""
    return bool(_PER_YEAR.search(question))


def says_annual(text: str) -> bool:
    """Whether a text says "annual(ly)", which holds the "year" of a question asking per year: "how much is
    business per year" is answered by the Business row's "Annual price". Not the other way: "annual" in a question is
    not held by "7-year audit logs"."""
    return bool(_ANNUAL.search(text))


# A web address: "https://...", "www....", or a dotted host name ("status.northwindcloud.example").
_WEB_ADDRESS = re.compile(
    r"https?://\S+|\bwww\.\S+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|dev|app|example)\b", re.IGNORECASE
)


def address_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "url" or "website" when the text writes a web address, its "email" when the text writes an
    e-mail address: "status page url" is answered by "The status page at status.northwindcloud.example ..."."""
    held = set()
    if "email" in wanted and _EMAIL_ADDRESS.search(text):
        held.add("email")
    asked_web = wanted & {"url", "website"}
    if asked_web and _WEB_ADDRESS.search(without_addresses(text)):
        held |= asked_web
    return held


# A yes/no question whether something includes a thing is answered by a text saying it excludes it, and the other
# way: "do prices include tax" by "All prices are in U.S. dollars (USD) and exclude taxes".
_OPPOSITES = {
    "include": re.compile(r"\bexclu(?:de[sd]?|ding|sive)\b", re.IGNORECASE),
    "exclude": re.compile(r"\binclu(?:de[sd]?|ding|sive)\b", re.IGNORECASE),
}


def opposite_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "include" ("exclude") that a text holds by saying the opposite: for a yes/no question only."""
    return {word for word in wanted & _OPPOSITES.keys() if _OPPOSITES[word].search(text)}


# "how do i get a refund", "how do nonprofits prove it": a question asking the way to do something, and a text saying
# how it is done: done, sent or requested through or via something ("Refund requests must be submitted through the
# billing portal", "Verification is done through TechSoup"), by mail or by filling in a form, or a resolution field.
# Not anything "through" something: "Purchases made through a reseller" says who sold it.
_ASKS_WAY = re.compile(r"^\W*how\s+(?:do|can|should|would|could)\s+(?:i|we|you|u|one)\b|^\W*how\s+to\b", re.IGNORECASE)
_STATES_WAY = re.compile(
    r"\b(?:submit(?:ted)?|done|sent|request(?:ed)?|go(?:es)?|handled|processed|appl(?:y|ied))\b[^.;]{0,30}?"
    r"\b(?:through|via|using)\b|\bby\s+(?:e-?mail|mail|courier|phone|calling|contacting|submitting|filling)\b"
    r"|\bfill\s+in\b|^\s*resolution\s*:",
    re.IGNORECASE,
)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def asks_way(question: str) -> bool:
    """Whether a question asks how to do something."""
    return bool(_ASKS_WAY.search(question))


def states_way(text: str) -> bool:
    """Whether a text says how something is done (through, via, by submitting, a resolution), or gives the command
    that does it in code ("`nwctl bucket delete <name> --force`: delete a bucket ..."; a name in code, as
    "`Retry-After`", is no command)."""
    return bool(_STATES_WAY.search(text)) or any(len(m.group(1).split()) > 1 for m in _CODE_SPAN.finditer(text))


# "where to apply for startup pricing", "where do we send legal notices": a question asking where to go or write.
_ASKS_WHERE = re.compile(r"^\W*where\b|\bwhere\s+(?:to|do|does|can|should)\b", re.IGNORECASE)


def asks_where(question: str) -> bool:
    """Whether a question asks where: an address that a unit writes answers it."""
    return bool(_ASKS_WHERE.search(question))


def states_address(text: str) -> bool:
    """Whether a text writes an e-mail or a web address."""
    return bool(_EMAIL_ADDRESS.search(text) or _WEB_ADDRESS.search(text))


# An HTTP status as documents write it: "HTTP 429", "429 Too Many Requests", "403 Forbidden".
_HTTP_STATUS = re.compile(r"\bHTTP[ /]?[1-5]\d\d\b|\b[1-5]\d\d (?:[A-Z][a-z]+)(?: [A-Z][a-z]+){0,2}\b")
_STATUS_CODE_WORDS = frozenset({"status", "http", "response"})


def status_code_terms(wanted: set[str], text: str) -> set[str]:
    """The question's "status", "http" or "response" when it asks for a code and the text states an HTTP status:
    "what status code when rate limited" is answered by "The API returns HTTP 429 with error code E-2410"."""
    if "code" not in wanted or not _HTTP_STATUS.search(text):
        return set()
    return wanted & (_STATUS_CODE_WORDS | {"code"})


# "apply" names two things: asking for something ("where to apply for startup pricing", "how do startups apply")
# and a rule covering something ("After 12 months, the normal price applies"). A question asking how or where to
# apply is answered by a unit about applying ("Applications go through startups@..."), not by one saying a rule
# applies, which held its "apply" and answered it with the price after the first year.
_ASKS_TO_APPLY = re.compile(r"\bapply(?:ing)?\s+for\b|\b(?:where|how)\b[^?]*\bapply\s*(?:[?.!]|$)", re.IGNORECASE)
_STATES_APPLYING = re.compile(
    r"\bappl(?:y|ies|ied|ying)\s+(?:for|through|via|online)\b|\bapplica(?:tion|nt)s?\b", re.IGNORECASE
)


def asks_to_apply(question: str) -> bool:
    """Whether a question asks how or where to apply for something, not whether a rule applies."""
    return bool(_ASKS_TO_APPLY.search(question))


def states_applying(text: str) -> bool:
    """Whether a text is about applying for something ("apply for", "Applications go through ...")."""
    return bool(_STATES_APPLYING.search(text))


# "which plans don't include phone support", "which regions do not have C5": the kind asked for ("plans"), when the
# question asks which of them lack something. A table row of that kind holding the thing is one that has it.
_WHICH_KIND = re.compile(r"^\W*(?:which|what)\s+([a-z][a-z-]*)\b", re.IGNORECASE)
_DENIED = re.compile(
    rf"\b(?:not|never|cannot|{'|'.join(sorted(BARE_NEGATIONS))})\b|n['’]t\b|\bno\s+longer\b", re.IGNORECASE
)


def negated_kind(question: str) -> set[str]:
    """The content terms of the kind a "which ... not" question asks for; empty for any other question."""
    match = _WHICH_KIND.match(question)
    if not match or not _DENIED.search(question, match.end()):
        return set()
    return content_terms(match.group(1))


# What a question sets aside to ask about the rest: "other than invoices what do we keep 7 years", "except alcohol
# what isnt reimbursed", "besides the vpn, what else ...". The phrase runs to a comma, a question word, a
# preposition ("besides card for uk payments": card) or the end.
_EXCLUDING = re.compile(
    r"\b(?:other than|besides|apart from|aside from|except(?: for)?|excluding)\s+(.+?)"
    r"(?=\s*[,;?]|\s+(?:what|which|who|whom|how|where|when|why|do|does|did|is|are|can|could|should|will|for|on|in"
    r"|to|with|at|of|from|by)\b|\s*$)",
    re.IGNORECASE,
)


def excluded_terms(question: str) -> set[str]:
    """The content terms of what a question sets aside ("other than invoices ...": invoice): the answer is about the
    others, so a unit naming it answers after those that do not. The words stay the question's: they say what it is
    about (invoices are among the records it asks of)."""
    return set().union(*(content_terms(m.group(1)) for m in _EXCLUDING.finditer(question)))


def identifiers(text: str) -> set[str]:
    """Terms that name something exactly (E-4412, v2.1.0, 7.2): they contain a digit."""
    return {t for t in content_terms(text) if any(ch.isdigit() for ch in t)}


# Where a question asks a second thing: a semicolon, a question mark before more words, a spaced "+" or "&", or a
# comma, spaced dash or "and" before a question word ("... date and how do i see ...", ", can we still get a refund").
# "refund and cancellation policy" asks one thing, and so does a claim ("For every 1,000 children, more than 300
# ...", "... T cells, which causes ..."): after a comma "which" opens a relative clause, after "and" a question.
QUESTION_OPENING = r"(?:what|when|where|who|why|how|can|could|do|does|did|is|are|was|were|will|should|may)\b"
_QUESTION_BREAK = re.compile(
    rf"\s*(?:[;?]|\s[+&]\s|(?:,|\s[-–—])\s*(?={QUESTION_OPENING})|,?\s*\band\s+(?=(?:{QUESTION_OPENING}|which\b)))\s*",
    re.IGNORECASE,
)


# A topic before a colon is what each part after it asks about ("trip to london: hotel cap and meal allowance").
_TOPIC = re.compile(r":\s+")
# "and" between two things of two words or more ("vpn rules and laptop requirements"); after one word it joins
# modifiers of one thing ("refund and cancellation policy"). A sentence ending in a full stop states something: its
# "and" joins what the statement is about ("... similar in teaching and non-teaching hospitals."), so a claim is
# read whole.
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)


def _and_parts(part: str) -> list[str]:
    pieces = _AND.split(part)
    if len(pieces) > 1 and all(len(question_terms(piece)) >= 2 for piece in pieces):
        return pieces
    return [part]


def _is_statement(text: str) -> bool:
    return text.rstrip().endswith(".")


# "A vs B" compares two things, each asked the rest of the question: "p1 vs p2 response time" asks P1's response
# time and P2's. A is the word before "vs", B the word after it, with a preposition or article before it ("now vs in
# 2025"); "difference between A and B" the same.
_VERSUS = re.compile(r"(\S+)\s+(?:vs\.?|versus)\s+((?:(?:in|on|at|for|of|the|a|an)\s+)?\S+)", re.IGNORECASE)
_BETWEEN = re.compile(
    r"\b(?:differences?|diff)\s+between\s+(?:(?:a|an|the)\s+)?(\S+)\s+and\s+(?:(?:a|an|the)\s+)?(\S+)", re.IGNORECASE
)


def comparison_parts(question: str) -> list[str]:
    """The two questions a comparison asks ("E-4412 vs E-4413" asks each code; "starter vs team monthly price" the
    Starter plan's and the Team plan's), or [] when the question compares nothing."""
    found = _VERSUS.search(question) or _BETWEEN.search(question)
    if not found:
        return []
    before, after = question[: found.start()], question[found.end() :]
    parts = [" ".join(f"{before} {side} {after}".split()) for side in found.groups()]
    return parts if all(question_terms(part) for part in parts) else []


def question_parts(question: str) -> list[str]:
    """The things a question asks, in order: "api v1 shutdown date and how do i see remaining quota in v2" asks
    two, "trip to london: hotel cap and meal allowance" asks two about London. A part without content words ("what
    is it") is left out; one part when the question asks one thing."""
    topic, rest = "", question
    found = _TOPIC.search(question)
    if found and question_terms(question[found.end() :]):
        topic, rest = question[: found.start()], question[found.end() :]
    statement = _is_statement(question)
    parts = [
        piece
        for part in _QUESTION_BREAK.split(rest)
        if part and question_terms(part)
        for piece in ([part] if statement else _and_parts(part))
        if question_terms(piece)
    ]
    if len(parts) < 2:
        return [question] if question_terms(question) else []
    return [f"{topic} {part}" if topic else part for part in parts]
