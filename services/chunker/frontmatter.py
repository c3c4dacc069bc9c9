"""YAML front matter between `---` fences: how a source file states its own governance metadata.

Read fail-closed: a key that is present but cannot be used refuses the document (InvalidArgument
naming the document and the key), because dropping it silently would file a confidential document
under `public`. Checking the values is governance.py's job; this module only reads them.
"""

import difflib
import re
from typing import NamedTuple

import yaml

from shared.errors import InvalidArgument

# Blank lines may come first; YAML's own end marker `...` closes it as `---` does (Pandoc writes either).
_OPENING = r"\A(?:[ \t]*\r?\n)*---[ \t]*\r?\n"
_FENCE = re.compile(_OPENING + r"(?:(.*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_OPENED = re.compile(_OPENING)
# Hugo's TOML front matter, between `+++` lines: not read, so refused rather than taken for text (its keys would
# be ignored and the document filed under `public`).
_TOML_OPENED = re.compile(r"\A(?:[ \t]*\r?\n)*\+\+\+[ \t]*\r?\n")
KNOWN_KEYS = (
    "doc_id",
    "title",
    "version",
    "effective_from",
    "effective_to",
    "access_scopes",
    "content_type",
    "supersedes",  # document ids this one replaces, or `none` (services/chunker/supersession.py)
)
# Keys other tools use for who may read a document. Read as other metadata they would leave a document that
# states no access_scopes public: `scopes: [hr]` was filed public. Where no scopes are given (in the request or
# as access_scopes), they refuse it (refuse_access_like_keys).
ACCESS_LIKE_KEYS = frozenset(
    {
        "scope",
        "scopes",
        "access",
        "acl",
        "acls",
        "access_level",
        "access_control",
        "allowed_scopes",
        "allowed_groups",
        "allowed_roles",
        "permission",
        "permissions",
        "visibility",
        "audience",
        "readers",
        "roles",
        "confidentiality",
        "classification",
        "sensitivity",
        "restricted",
        "private",
        "public",  # a help desk's `public: false` marks an internal note
        "internal",
    }
)
# How close an unknown key must be to a known one to count as its misspelling (`acess_scopes`: 0.96).
_MISSPELLING_CUTOFF = 0.8
_NULL_TAG = "tag:yaml.org,2002:null"


class _Loader(yaml.SafeLoader):
    """Every scalar stays the text it was written as (`version: 1.10` is not the float 1.1, and a date
    is checked by governance.py, not guessed by YAML); only an empty value or `null` reads as None."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag == _NULL_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class _DuplicateKey(ValueError):
    pass


def _mapping_without_duplicates(loader: _Loader, node: yaml.MappingNode):
    # PyYAML keeps the last of two equal keys: `access_scopes: hr` then `access_scopes: public` would be public.
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, str) and key.lower() in seen:
            raise _DuplicateKey(key)
        seen.add(key.lower() if isinstance(key, str) else key)
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


class FrontMatter(NamedTuple):
    # The known keys (lower-cased) with their YAML values.
    fields: dict[str, object]
    # Where the content starts (0 without front matter).
    body_start: int
    # Dotted paths of the keys that read like access control but are not a top-level access_scopes
    # (access_like_paths), for the chunker to refuse a document nobody gave scopes (refuse_access_like_keys).
    access_like: list[str]


def split_front_matter(text: str, name: str = "document") -> FrontMatter:
    """The document's front matter. Unknown keys are ignored unless they misspell a known one, or read like
    access control (listed in `access_like`)."""
    match = _FENCE.match(text)
    if not match:
        if _TOML_OPENED.match(text):
            raise InvalidArgument(
                "front_matter",
                f"{name}: TOML front matter (between '+++' lines) is not read; write it as YAML between '---' lines",
            )
        if _OPENED.match(text):
            # Read as text, its keys would be ignored and the document filed under `public`.
            raise InvalidArgument(
                "front_matter",
                f"{name}: opens front matter with a '---' line that no '---' (or '...') line closes; close it, or "
                "start the document with something else",
            )
        return FrontMatter({}, 0, [])
    try:
        loaded = yaml.load(match.group(1) or "", Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except _DuplicateKey as dup:
        raise InvalidArgument(f"front_matter.{dup}", f"{name} states {str(dup)!r} twice") from None
    except yaml.YAMLError as err:
        raise InvalidArgument("front_matter", f"{name}: front matter is not valid YAML: {_one_line(err)}") from None
    if loaded is None:
        return FrontMatter({}, match.end(), [])
    if not isinstance(loaded, dict):
        raise InvalidArgument(
            "front_matter", f"{name}: front matter must be `key: value` lines, not a YAML {type(loaded).__name__}"
        )
    fields: dict[str, object] = {}
    for raw_key, value in loaded.items():
        key = str(raw_key).strip().lower()
        if key in KNOWN_KEYS:
            fields[key] = value
            continue
        close = difflib.get_close_matches(key, KNOWN_KEYS, n=1, cutoff=_MISSPELLING_CUTOFF)
        if close:
            raise InvalidArgument(
                f"front_matter.{raw_key}", f"{name}: unknown key {raw_key!r}; did you mean {close[0]!r}?"
            )
    return FrontMatter(fields, match.end(), access_like_paths(loaded))


def access_like_paths(value: object, path: str = "") -> list[str]:
    """Dotted paths of the keys in stated metadata (front matter, a JSON thread) that state access but are not
    ragmesh's top-level `access_scopes`: `scopes`, `visibility`, a message's `public: false`, an access_scopes
    nested under another key (`params.access_scopes`, as Hugo nests keys). ragmesh reads none of them, so a
    document stating only those would be public."""
    found = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for raw_key, inner in items:
        here = f"{path}.{raw_key}" if path else str(raw_key)
        if isinstance(raw_key, str):
            key = raw_key.strip().lower().replace("-", "_")
            if not path and key in KNOWN_KEYS:
                continue
            if key == "access_scopes" or key in ACCESS_LIKE_KEYS:
                found.append(here)
        found += access_like_paths(inner, here)
    return found


def refuse_access_like_keys(keys: list[str], name: str) -> None:
    """For a document whose scopes nobody stated: a key that reads like access control means it was meant."""
    if keys:
        raise InvalidArgument(
            f"front_matter.{keys[0]}",
            f"{name}: {keys[0]!r} reads like access control, which ragmesh takes from a top-level "
            "'access_scopes' only; without it the document would be public. State 'access_scopes' (`public` too, "
            f"to keep {keys[0]!r} as other metadata)",
        )


def _one_line(err: yaml.YAMLError) -> str:
    return " ".join(str(err).split())
