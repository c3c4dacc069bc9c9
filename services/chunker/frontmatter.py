"""`---`-delimited `key: value` front matter: how a source file states its own governance metadata."""

import re

_FENCE = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
KNOWN_KEYS = {"doc_id", "title", "version", "effective_from", "effective_to", "access_scopes", "content_type"}


def split_front_matter(text: str) -> tuple[dict[str, str], int]:
    """Returns the fields and the offset where the document's content starts (0 without front matter)."""
    match = _FENCE.match(text)
    if not match:
        return {}, 0
    fields = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        key = key.strip().lower()
        if sep and key in KNOWN_KEYS:
            fields[key] = value.strip()
    return fields, match.end()
