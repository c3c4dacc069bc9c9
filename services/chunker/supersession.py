"""What a document's own text says about when it applies and what it replaces, for documents without front
matter: "Effective 2026-03-01. Replaces the 2025 policy." Dates are parsed with python-dateutil; a statement
is only read from a sentence that names it (effective / in force / valid from ..., replaces / supersedes
...), never guessed from any date in the text. What is found is reported in the ingest result (the
operator confirms it, or overrides it with front matter: `effective_from`, `supersedes`)."""

import dataclasses
import re
from datetime import datetime

from dateutil import parser as dateparser

_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|jun(?:e)?|jul(?:y)?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATE = (
    r"(\d{4}-\d{1,2}-\d{1,2}"  # 2026-03-01
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTHS}\s*,?\s*\d{{4}}"  # 1 March 2026
    rf"|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?\s*,?\s*\d{{4}})"  # March 1, 2026
)
_EFFECTIVE = re.compile(
    r"\b(?:effective(?:\s+(?:from|as\s+of|on|date))?|in\s+(?:force|effect)\s+(?:from|as\s+of|on)|"
    r"valid\s+(?:from|as\s+of)|applies\s+(?:from|as\s+of)|takes\s+effect\s+(?:on|from)?)\s*:?\s*" + _DATE,
    re.IGNORECASE,
)
# "X replaces / supersedes Y" (Y up to the clause's end; a point inside a word, as in "the 2.2 notes", is no end),
# and the passive "Y is replaced by this X".
_REPLACES = re.compile(
    r"\b(?:replaces|supersedes|replace|supersede|replacing|superseding)\s+((?:[^.;:\n]|[.:](?=\w)){3,120})",
    re.IGNORECASE,
)
_REPLACED_BY_THIS = re.compile(r"\b(?:is|are)\s+(?:hereby\s+)?(?:replaced|superseded)\s+by\s+this\b", re.IGNORECASE)
# Nouns that name a document. A statement counts only when the document itself replaces something ("This
# policy replaces ...", "Replaces ..." with no subject, "it supersedes ...") and what it replaces is named as a
# document (one of these nouns, or a year): "The new dashboard replaces the legacy upload page" describes the
# product, and acting on it would close whichever stored document shares a word with "upload page".
_DOCUMENT_NOUN = (
    r"(?:policy|policies|agreement|agreements|terms|conditions|guide|guides|guidelines|handbook|manual|version|"
    r"versions|edition|editions|addendum|addenda|contract|contracts|document|documents|notice|procedure|procedures|"
    r"standard|standards|schedule|statement|sow|msa|dpa|sla|runbook|playbook|rules|notes|revision|release|faq)"
)
_DOCUMENT_WORD = re.compile(rf"\b{_DOCUMENT_NOUN}\b", re.IGNORECASE)
# The document as the subject: nothing ("Replaces the 2025 policy."), "it" or "this", or a noun phrase of at most five
# words ending in a document noun ("This policy", "These terms", "The 2026 Refund Policy").
_SELF_SUBJECT = re.compile(rf"^(?:|it|this|(?:[\w()-]+\s+){{0,4}}{_DOCUMENT_NOUN})$", re.IGNORECASE)
_YEAR = re.compile(r"\b(19\d{2}|20\d{2})\b")
_TOPIC_WORD = re.compile(r"[a-z][a-z]{2,}")
# Words that say nothing about which document is meant.
_GENERIC = frozenset(
    "the this that our all any previous prior earlier former old older version versions edition document "
    "documents policy policies dated from and for with of".split()
)


SOURCE_TEXT, SOURCE_FRONT_MATTER = "text", "front matter"


@dataclasses.dataclass
class Statement:
    field: str  # "effective_from" | "supersedes"
    value: str  # an ISO date, or the replaced document (its id from front matter, as the text names it)
    evidence: str  # the words it was read from
    source: str = SOURCE_TEXT


def _sentence_around(text: str, start: int, end: int) -> str:
    left = max(text.rfind(".", 0, start), text.rfind("\n", 0, start)) + 1
    right_dot = text.find(".", end)
    right = len(text) if right_dot < 0 else right_dot + 1
    return " ".join(text[left:right].split())[:200]


def effective_date(text: str) -> Statement | None:
    """The first stated effective date that parses."""
    for match in _EFFECTIVE.finditer(text):
        written = match.group(1)
        try:
            if written[:1].isdigit() and "-" in written:  # year-month-day: never read day-first
                parsed = datetime.strptime(written, "%Y-%m-%d")
            else:  # a month name makes day and month unambiguous
                parsed = dateparser.parse(written, fuzzy=False)
        except (ValueError, OverflowError):
            continue
        return Statement("effective_from", parsed.date().isoformat(), _sentence_around(text, *match.span()))
    return None


def _clause_before(text: str, at: int) -> str:
    """The clause's words before position `at`: from after the last sentence end, semicolon, colon or line
    break, spaces collapsed."""
    start = max(text.rfind(mark, 0, at) for mark in (". ", ";", ":", "\n", "! ", "? ")) + 1
    return " ".join(text[start:at].split())


def _names_document(words: str) -> bool:
    return bool(_DOCUMENT_WORD.search(words) or _YEAR.search(words))


def replaced_documents(text: str) -> list[Statement]:
    """Each statement of the document that it replaces another, with the other as written."""
    found = []
    for match in _REPLACES.finditer(text):
        subject = _clause_before(text, match.start()).strip(" ,*_#>+-")
        target = " ".join(match.group(1).split()).strip(" ,")
        if _SELF_SUBJECT.match(subject) and _names_document(target):
            found.append(Statement("supersedes", target, _sentence_around(text, *match.span())))
    for match in _REPLACED_BY_THIS.finditer(text):
        target = _clause_before(text, match.start()).strip(" ,")
        if 3 <= len(target) <= 120 and _names_document(target):
            found.append(Statement("supersedes", target, _sentence_around(text, *match.span())))
    return found


def infer(text: str) -> list[Statement]:
    stated = effective_date(text)
    return ([stated] if stated else []) + replaced_documents(text)


def topic_words(text: str) -> set[str]:
    return {w for w in _TOPIC_WORD.findall(text.lower()) if w not in _GENERIC}


def match_replaced(target: str, own_title: str, candidates: list[dict]) -> list[dict]:
    """The stored documents a "replaces X" statement can mean: those whose title or source names the year
    X names (or whose effective date falls in it), and that share a topic word with X or with the new
    document's title. Each candidate: document_id, title, source_uri, effective_from."""
    years = set(_YEAR.findall(target))
    topic = topic_words(_YEAR.sub(" ", target)) or topic_words(_YEAR.sub(" ", own_title))
    chosen = []
    for c in candidates:
        described = f"{c['title']} {c['source_uri']} {c['document_id']}"
        if years and not (years & set(_YEAR.findall(described)) or c["effective_from"][:4] in years):
            continue
        if topic and not topic & topic_words(_YEAR.sub(" ", described)):
            continue
        chosen.append(c)
    return chosen
