"""Pages of a list RPC (AIP-158): a page size with a default and a maximum, and an opaque page token that holds
the key of the previous page's last item, so each page is a seek to that key, not an offset (as cheap however deep,
and nothing listed twice or skipped while items are written meanwhile)."""

import base64
import binascii
import json
from collections.abc import Callable, Sequence
from typing import TypeVar

from shared.errors import InvalidArgument

DEFAULT_PAGE_SIZE = 1000
MAX_PAGE_SIZE = 10000

Key = tuple[str | float, ...]
T = TypeVar("T")


def page_size(requested: int) -> int:
    """0 means the default; more than the maximum is read as the maximum."""
    if requested < 0:
        raise InvalidArgument("page_size", f"page_size must be 0 (the default, {DEFAULT_PAGE_SIZE}) or more")
    return min(requested or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def page_token(key: Key) -> str:
    """Opaque to callers: the key of a page's last item."""
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode()


def after_key(token: str, types: tuple[type, ...], rpc: str) -> Key | None:
    """The key a token holds (None for no token), each part of the type `types` names; a token that is not one
    `rpc` returned is refused naming the field."""
    if not token:
        return None
    try:
        key = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (binascii.Error, ValueError):  # bad base64, bad UTF-8 or bad JSON
        key = None
    if not (
        isinstance(key, list)
        and len(key) == len(types)
        # A float key written as a whole number comes back as an int; a bool is no number here.
        and all(
            isinstance(k, t) or (t is float and isinstance(k, int) and not isinstance(k, bool))
            for k, t in zip(key, types, strict=True)
        )
    ):
        raise InvalidArgument("page_token", f"page_token is not one a {rpc} page returned")
    return tuple(float(k) if t is float else k for k, t in zip(key, types, strict=True))


def cut(items: Sequence[T], limit: int, key: Callable[[T], Key]) -> tuple[Sequence[T], str]:
    """A page of `items` read with one more than `limit` (to learn whether another page follows), and the token
    of the next page ("" after the last)."""
    if len(items) <= limit:
        return items, ""
    return items[:limit], page_token(key(items[limit - 1]))
