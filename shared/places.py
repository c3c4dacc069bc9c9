"""Countries a question names, and the units that speak of every country at once: "can i work from portugal for a
month" is answered by "Working from a country other than your country of employment is allowed for up to 30 days",
which never writes "Portugal". A unit that names a country itself is about that one, not about the question's.

Country names come from ISO 3166 (pycountry), in the form people write them ("South Korea", not "Korea, Republic
of"), matched as whole words in any case.
"""

import functools
import re

import pycountry

from shared.text import content_terms

# Words that speak of any country: "a country other than your country of employment", "international travel",
# "employees working abroad".
_ABROAD = ("abroad", "overseas", "international", "foreign")  # being outside one's own country, in one word
_ANY_COUNTRY = re.compile(rf"\b(?:countr(?:y|ies)|{'|'.join(_ABROAD)})\b", re.IGNORECASE)


@functools.cache
def _country_names() -> re.Pattern:
    names = set()
    for country in pycountry.countries:
        for name in (getattr(country, "common_name", None), country.name):
            if name and "," not in name and "(" not in name:  # "Korea, Republic of" is written "South Korea"
                names.add(name.lower())
    # Longest first, so "South Sudan" is one country, not "Sudan".
    alternatives = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)


def countries_named(text: str) -> set[str]:
    """The content terms of each country the text names ("spain"; "united", "kingdom")."""
    return set().union(*(content_terms(match.group(0)) for match in _country_names().finditer(text)))


def country_terms(named: set[str], text: str) -> set[str]:
    """The question's country words (`named`, from countries_named) that a text holds by speaking of any country
    and naming none."""
    if not named or not _ANY_COUNTRY.search(text) or countries_named(text):
        return set()
    return set(named)


# The words a question asks about being outside one's own country with ("per diem abroad", "overseas trip"), and
# the texts that speak of it in any of them or as "a country other than your country of employment". Not a text
# that speaks of a country at all: "any location within their country of employment" is at home.
_ABROAD_WORDS = frozenset().union(*(content_terms(word) for word in _ABROAD))
_ELSEWHERE = re.compile(
    rf"\b(?:{'|'.join(_ABROAD)})\b|\b(?:another|other)\s+countr(?:y|ies)\b|\bcountr(?:y|ies)\s+other\s+than\b",
    re.IGNORECASE,
)


def abroad_terms(wanted: set[str], text: str) -> set[str]:
    """The question's words for being abroad that a text holds by speaking of it in any words: "working from
    abroad for 6 weeks" is answered by "Working from a country other than your country of employment is allowed
    for up to 30 days ... Longer stays require approval ..."."""
    asked = wanted & _ABROAD_WORDS
    return asked if asked and _ELSEWHERE.search(text) else set()
