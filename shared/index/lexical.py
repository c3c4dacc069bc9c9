"""How user text becomes a BM25 query: one definition for every index backend, so they cannot drift.

Each whitespace token becomes one phrase of its word characters ("E-4412" stays one phrase, "E 4412"),
at most MAX_QUERY_TERMS of them, duplicates dropped. A backend quotes the phrases into its own query
form (FTS5 expressions, match_phrase clauses): no user text ever reaches a query syntax.
"""

import re

WORD = re.compile(r"\w+", re.UNICODE)
# Longer queries (a pasted paragraph) keep their first 64 tokens: more adds cost, not recall.
MAX_QUERY_TERMS = 64


def search_phrases(text: str) -> list[str]:
    """User text -> distinct phrases in query order, one per whitespace token with word characters."""
    phrases = []
    for token in text.split():
        words = WORD.findall(token)
        if words:
            phrases.append(" ".join(words))
        if len(phrases) >= MAX_QUERY_TERMS:
            break
    return list(dict.fromkeys(phrases))
