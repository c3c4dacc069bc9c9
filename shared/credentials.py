"""The client side of gateway authentication: find an API key and send it as a bearer token.

A key comes from RAGMESH_API_KEY, else from the local key file a mesh launcher wrote for the tenant
(<data dir>/api-keys/<tenant>, see shared/keys.py). Only the gateway checks keys.
"""

import collections
from collections.abc import Callable
from pathlib import Path

import grpc

from shared import config
from shared.keys import LOCAL_KEYS_DIR
from shared.names import TENANT_ID

API_KEY_ENV = "RAGMESH_API_KEY"
DEFAULT_TENANT = "demo"


def data_dir() -> str:
    return config.mesh().data_dir


def find_api_key(tenant_id: str = "", folder: str | None = None) -> str:
    """RAGMESH_API_KEY, else the local key for the tenant (the demo tenant's when none is named), else ''."""
    key = config.ToolSettings.from_env().api_key.strip()
    if key:
        return key
    tenant_id = tenant_id or DEFAULT_TENANT
    if not TENANT_ID.fullmatch(tenant_id):
        return ""  # never a path outside the key folder; the gateway will say what is wrong
    try:
        return (Path(folder or data_dir()) / LOCAL_KEYS_DIR / tenant_id).read_text().strip()
    except OSError:
        return ""


class _CallDetails(
    collections.namedtuple(
        "_CallDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")
    ),
    grpc.ClientCallDetails,
):
    pass


class BearerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds `authorization: Bearer <key>`; `key_for` picks the key from the request's tenant id, so one
    channel can serve a client that holds keys for several tenants (evaluation, tests)."""

    def __init__(self, key_for: Callable[[str], str]):
        self._key_for = key_for

    def _details(self, details, request):
        key = self._key_for(getattr(request, "tenant_id", ""))
        if not key:
            return details
        metadata = [*(details.metadata or ()), ("authorization", f"Bearer {key}")]
        return _CallDetails(
            details.method, details.timeout, metadata, details.credentials, details.wait_for_ready, details.compression
        )

    def intercept_unary_unary(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details, request), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):
        return continuation(self._details(client_call_details, request), request)


def gateway_channel(address: str, key: str | Callable[[str], str] | None = None, options=None) -> grpc.Channel:
    """An insecure loopback channel that authenticates every call: with `key`, a fixed key or a
    tenant -> key function; without it, find_api_key for the request's tenant."""
    key_for = key if callable(key) else (lambda _tenant: key) if key else find_api_key
    return grpc.intercept_channel(grpc.insecure_channel(address, options=options), BearerToken(key_for))
