"""The currencies a question names and the ones a unit states, in any of their forms: "team plan price in euros" is
answered by "| European Union | EUR | €75 | ... |", not by the Team row in dollars that shares more of its words.

A question names a currency by its name or code ("euros", "GBP", "australian dollars"), never by a symbol on an
amount: "who approves a $1000 refund" asks about a refund, not about dollars. A unit states one in any form,
symbol included, and a sentence about currency in general ("refunds are issued in the currency of the original
invoice") speaks to every currency a question names.
"""

import re

from shared.text import content_terms

# Name and code forms, by ISO code; a qualified dollar comes before the bare one, which is the US dollar.
_WORDS = (
    ("AUD", r"\baud\b|\baustralian dollars?\b"),
    ("CAD", r"\bcad\b|\bcanadian dollars?\b"),
    ("USD", r"\busd\b|\bus dollars?\b|\bdollars?\b"),
    ("EUR", r"\beur\b|\beuros?\b"),
    ("GBP", r"\bgbp\b|\bpounds? sterling\b|\bsterling\b|\bpounds?\b"),
    ("JPY", r"\bjpy\b|\byen\b"),
    ("INR", r"\binr\b|\brupees?\b"),
    ("CHF", r"\bchf\b|\bswiss francs?\b"),
)
# Symbols, which only a stated amount carries: "A$119" is Australian, "US$" or a "$" no letter precedes American.
_SYMBOLS = (
    ("AUD", r"\bA\$"),
    ("CAD", r"\bC\$"),
    ("USD", r"\bUS\$|(?<![A-Za-z])\$"),
    ("EUR", "€"),
    ("GBP", "£"),
    ("JPY", "¥"),
    ("INR", "₹"),
)
_GENERIC = re.compile(r"\bcurrenc(?:y|ies)\b", re.IGNORECASE)


def _named(text: str, forms) -> dict[str, set[str]]:
    """Each currency the forms find in the text, with the content terms of the words that name it; a form a
    longer one has taken ("dollars" inside "australian dollars") names nothing more."""
    found: dict[str, set[str]] = {}
    for code, pattern in forms:
        for match in re.finditer(pattern, text, flags=re.IGNORECASE):
            found.setdefault(code, set()).update(content_terms(match.group()))
        text = re.sub(pattern, " ", text, flags=re.IGNORECASE)
    return found


def question_currencies(question: str) -> dict[str, set[str]]:
    """The currencies the question names by name or code, each with the question's terms that name it."""
    return {code: terms for code, terms in _named(question, _WORDS).items() if terms}


def stated_currencies(unit: str, generic: bool = True) -> set[str]:
    """The ISO codes of the currencies a unit states, in any form; "*" when it speaks of currency in general
    (`generic`; a table row's cells do not: its header's "Currency" column is not a statement)."""
    codes = set(_named(unit, _WORDS)) | set(_named(unit, _SYMBOLS))
    if generic and _GENERIC.search(unit):
        codes.add("*")
    return codes


def currency_terms_held(
    asked: dict[str, set[str]], unit: str, row: bool = False, known: set[str] | None = None
) -> set[str]:
    """The question's currency terms a unit holds: those of each asked currency it states, and all of them when it
    speaks of currency in general, unless the question names one currency only and the passages never state it
    (`known`: the currencies they state; None: any), which is not one they deal in: "Expensify converts
    foreign-currency receipts" does not answer "can i pay in swiss francs". A question naming two asks how they
    meet, which a general rule answers ("paid in EUR, will my refund come back in dollars": "Refunds are issued in
    the currency of the original invoice")."""
    stated = stated_currencies(unit, generic=not row)
    general = "*" in stated and (known is None or len(asked) > 1 or bool(known & asked.keys()))
    held: set[str] = set()
    for code, terms in asked.items():
        if code in stated or general:
            held |= terms
    return held
