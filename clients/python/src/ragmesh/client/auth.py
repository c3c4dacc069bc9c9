"""API keys: the gateway reads `authorization: Bearer <key>` metadata; the key decides the tenant."""

import os
from collections.abc import Callable

API_KEY_ENV = "RAGMESH_API_KEY"
GATEWAY_ADDR_ENV = "RAGMESH_GATEWAY_ADDR"
DEFAULT_GATEWAY_ADDR = "127.0.0.1:7070"

# A fixed key, or a function from the request's tenant id to a key (a caller holding several tenants' keys).
KeySource = str | Callable[[str], str]


def key_from_env() -> str:
    return os.environ.get(API_KEY_ENV, "").strip()


def bearer_metadata(key: str) -> list[tuple[str, str]]:
    """The call metadata for a key; none without one (the gateway then answers UNAUTHENTICATED)."""
    return [("authorization", f"Bearer {key}")] if key else []
