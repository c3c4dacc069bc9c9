"""Questions asking what there is of a kind ("what add-ons are there", "list the severity levels", "which plans do
you offer"), answered by the list or table that enumerates that kind, whole.

Answered unit by unit, such a question quoted whatever sentence held the kind's word best: "what add-ons are there"
gave "SCIM provisioning is included in Enterprise at no extra cost" (under the "Add-ons" heading), "which plans are
there" the refund policy's sentences on annual plans, and "what are the severity levels" three of the four levels.
The enumeration is the list or table that a passage names for the kind: by its section's heading ("## Severity
levels"), its lead-in ("Every response includes these headers:") or, for a table, its first column ("| Add-on |
Price |"). A question naming more than the kind ("list the add-ons for enterprise") is no such question here: the
list's name does not hold its other words, and the units that do answer it.
"""

import re

from shared.model import ScoredChunk
from shared.text import content_terms, is_list_item, is_table_header, is_table_rule

# The most items or rows an enumeration quotes, as a lead-in's list is quoted (entries.with_listed_items).
MAX_ITEMS = 8

_KIND = r"(?:the\s+|your\s+|of\s+the\s+)?(?:different\s+|available\s+)?(?P<kind>[\w][\w\s/-]*?)"
_ASKS_LIST = (
    # "list the add-ons", "list all severity levels", "please list every plan"
    re.compile(rf"^\W*(?:please\s+|pls\s+)?list\s+(?:all\s+|every\s+)?(?:of\s+)?{_KIND}\W*$", re.IGNORECASE),
    # "what add-ons are there", "which plans do you offer", "what kinds of plans exist", "what regions are available"
    re.compile(
        rf"^\W*(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?{_KIND}\s+"
        r"(?:are\s+there|exist|do\s+(?:you|we|they)\s+(?:offer|have|sell|support)|are\s+(?:available|offered))\W*$",
        re.IGNORECASE,
    ),
    # "what are the severity levels", "what are all the add-ons"
    re.compile(rf"^\W*what\s+are\s+(?:all\s+)?{_KIND}\W*$", re.IGNORECASE),
)


def listed_terms(question: str) -> set[str]:
    """The content terms of the kind a question asks to enumerate; empty for a question asking no list."""
    for pattern in _ASKS_LIST:
        match = pattern.match(question)
        if match:
            return content_terms(match.group("kind"))
    return set()


def enumeration(
    passages: list[ScoredChunk], spans: list[list[tuple[int, int]]], listed: set[str]
) -> list[tuple[ScoredChunk, int, int]]:
    """The items or rows of the best-ranked list or table named for the listed kind (at most MAX_ITEMS; two at
    least), each as (passage, start, end); empty when no passage enumerates it."""
    if not listed:
        return []
    found = [
        (section == listed, rank, [(passage, start, end) for start, end in group[:MAX_ITEMS]])
        for rank, (passage, units) in enumerate(zip(passages, spans, strict=True))
        for section in [content_terms(passage.chunk.heading_path[-1]) if passage.chunk.heading_path else set()]
        for name, group in _groups(passage.chunk.body, units)
        if len(group) >= 2 and listed <= section | name
    ]
    # A section headed by the kind alone ("## Plans") before one naming more ("## Limits by plan"), then by rank.
    return min(found, key=lambda f: (not f[0], f[1]))[2] if found else []


def _groups(body: str, units: list[tuple[int, int]]) -> list[tuple[set[str], list[tuple[int, int]]]]:
    """Each run of list items or table rows in a passage, with the words that name it: the lead-in before it
    (a line ending with ":") or a table's first column name. A table's header and rule are not its rows."""
    out: list[tuple[set[str], list[tuple[int, int]]]] = []
    name: set[str] = set()
    group: list[tuple[int, int]] = []
    kind = ""  # "row" or "item": what the current run is made of
    for start, end in units:
        unit = body[start:end].strip()
        unit_kind = "row" if unit.startswith("|") else "item" if is_list_item(unit) else ""
        if unit_kind != kind and group:
            out.append((name, group))
            group, name = [], set()
        kind = unit_kind
        if unit_kind == "row":
            if is_table_rule(unit):
                continue
            if is_table_header(body, end):
                name |= content_terms(unit.strip("|").split("|", 1)[0])
                continue
            group.append((start, end))
        elif unit_kind == "item":
            group.append((start, end))
        else:
            name = content_terms(unit) if unit.endswith(":") else set()
    if group:
        out.append((name, group))
    return out
