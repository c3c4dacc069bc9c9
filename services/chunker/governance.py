"""The governance metadata a document is filed under: who may read it (access scopes) and when it is
in force (effective dates).

Fail-closed: a value that is stated but cannot be used refuses the document with InvalidArgument
naming the document and the key; it never falls back to a default. Only a document that states no
scopes at all gets the deployment's default (`public`, or refused with `missing_scopes=refuse`).
"""

from shared.errors import InvalidArgument
from shared.model import PUBLIC_SCOPE, normalize_time
from shared.names import SCOPE_NAME

MISSING_SCOPES = ("public", "refuse")


def _kind(value) -> str:
    return "nothing" if value is None else f"a YAML {type(value).__name__}"


def text_value(value, field: str, name: str) -> str:
    """A stated scalar (doc_id, version, title, ...): a non-empty string."""
    if not isinstance(value, str):
        raise InvalidArgument(field, f"{name}: must be text, got {_kind(value)}")
    if not value.strip():
        raise InvalidArgument(field, f"{name}: is empty")
    return value.strip()


def scope_list(value, field: str, name: str) -> list[str]:
    """A YAML list of scope names, or the comma-separated `a, b` form the project has always read."""
    if value is None or value == [] or (isinstance(value, str) and not value.strip()):
        raise InvalidArgument(
            field, f"{name}: is empty; list the scopes that may read it (or `public`), or leave the key out"
        )
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, list):
        items = value
    else:
        raise InvalidArgument(field, f"{name}: must be a list of scope names, got {_kind(value)}")
    scopes: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise InvalidArgument(field, f"{name}: holds {_kind(item)}, not a scope name")
        item = item.strip()
        if not SCOPE_NAME.fullmatch(item):
            raise InvalidArgument(
                field, f"{name}: {item!r} is not a scope name (a letter or digit, then letters, digits and . _ : / @ -)"
            )
        if item not in scopes:
            scopes.append(item)
    return scopes


def date_value(value, field: str, name: str) -> str:
    """An ISO-8601 date or timestamp, kept as written once it parses."""
    text = text_value(value, field, name)
    try:
        normalize_time(text, field)
    except InvalidArgument:
        raise InvalidArgument(field, f"{name}: {text!r} is not an ISO-8601 date or timestamp") from None
    return text


def check_interval(effective_from: str, effective_to: str, name: str) -> None:
    if not effective_to:
        return
    if normalize_time(effective_to, "effective_to") <= normalize_time(effective_from, "effective_from"):
        raise InvalidArgument(
            "effective_to", f"{name}: {effective_to!r} is not after effective_from {effective_from!r}"
        )


def default_scopes(missing_scopes: str, name: str) -> list[str]:
    if missing_scopes == "public":
        return [PUBLIC_SCOPE]
    raise InvalidArgument(
        "access_scopes",
        f"{name} states no access scopes, and this deployment refuses "
        "unscoped documents (RAGMESH_CHUNKER_MISSING_SCOPES=refuse)",
    )
