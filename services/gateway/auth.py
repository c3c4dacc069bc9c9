"""Authentication at the gateway: every Gateway call carries `authorization: Bearer <API key>`.

The key decides who is calling: its tenant replaces an empty tenant in the request and must equal a
named one, every access scope the request names must be one the key holds, its role must allow the
method, and its token bucket must hold a token. Failures are UNAUTHENTICATED (no usable key),
PERMISSION_DENIED (a valid key asking for more) or RESOURCE_EXHAUSTED (over its rate, with the
delay), counted in `ragmesh_auth_failures_total{reason}` and logged with the key id, never the key.
Health and reflection stay open: launchers and load balancers probe them without a key.
"""

import contextlib
import contextvars
import logging
from typing import NoReturn

import grpc

from shared.errors import PermissionDenied, ResourceExhausted, Unauthenticated
from shared.keys import ApiKey, KeyRejected, KeyStore
from shared.observability import metrics
from shared.ratelimit import TokenBuckets
from shared.stubs import indexer_pb2

log = logging.getLogger("ragmesh.gateway.auth")

SERVICE_PREFIX = "/ragmesh.v1.Gateway/"
# The key behind the call being handled (None with authentication off): what it may write is
# checked after the chunker has read each document's own scopes (Funnel._ingest_one).
CALLER: contextvars.ContextVar[ApiKey | None] = contextvars.ContextVar("ragmesh_caller", default=None)
_READER = frozenset({"Search", "Ask", "GetChunk", "Feedback", "ListDocuments"})
# Feedback review (ListFeedback, RecordFeedbackExport) shows other users' questions and comments: writers.
_WRITER = _READER | {"Ingest", "DeleteDocument", "Erase", "ListFeedback", "RecordFeedbackExport"}
ROLE_METHODS = {"reader": _READER, "writer": _WRITER}
# `admin` (keys and tenants) may call every Gateway method of its tenant.


def _requested_scopes(request) -> list[str]:
    if hasattr(request, "filters"):  # Search, Ask
        return list(request.filters.access_scopes)
    return list(getattr(request, "access_scopes", ()))  # GetChunk


class Authenticator:
    def __init__(self, store: KeyStore, limits: TokenBuckets | None = None):
        self.store = store
        self.limits = limits or TokenBuckets(0, 0)

    def _refuse(self, error, reason: str, method: str, peer: str, key_id: str = "") -> NoReturn:
        metrics.AUTH_FAILURES.labels(reason).inc()
        log.warning("refused %s from %s (%s, key id %s): %s", method, peer, reason, key_id or "-", error.message)
        raise error

    def authenticate(self, metadata: dict[str, str], method: str, peer: str) -> ApiKey:
        header = metadata.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            self._refuse(
                Unauthenticated(
                    "missing API key: send the metadata `authorization: Bearer <key>` "
                    "(ragmesh keys create, or RAGMESH_API_KEY)"
                ),
                "missing",
                method,
                peer,
            )
        try:
            return self.store.authenticate(token.strip())
        except KeyRejected as rejected:
            self._refuse(Unauthenticated(rejected.message), rejected.reason, method, peer, rejected.key_id)

    def authorize(self, key: ApiKey, method: str, request, peer: str) -> None:
        """Checks the role, then binds the request to the key's tenant and checks its scopes."""
        allowed = ROLE_METHODS.get(key.role)
        if allowed is not None and method not in allowed:
            needed = "writer" if method in ROLE_METHODS["writer"] else "admin"
            self._refuse(
                PermissionDenied(
                    f"key {key.key_id} has role {key.role!r}, which may not call {method} (needs {needed})"
                ),
                "role",
                method,
                peer,
                key.key_id,
            )
        if not request.tenant_id:
            request.tenant_id = key.tenant_id
        elif request.tenant_id != key.tenant_id:
            self._refuse(
                PermissionDenied(f"key {key.key_id} is for tenant {key.tenant_id!r}, not {request.tenant_id[:80]!r}"),
                "tenant",
                method,
                peer,
                key.key_id,
            )
        missing = sorted({s for s in _requested_scopes(request) if not key.holds(s)})
        if missing:
            self._refuse(
                PermissionDenied(
                    f"key {key.key_id} does not hold access scope(s) {', '.join(repr(s[:80]) for s in missing)}"
                ),
                "scope",
                method,
                peer,
                key.key_id,
            )

    def check(self, method: str, request, context) -> ApiKey:
        metadata = {k.lower(): v for k, v in (context.invocation_metadata() or ()) if isinstance(v, str)}
        peer = context.peer()
        key = self.authenticate(metadata, method, peer)
        self.authorize(key, method, request, peer)
        wait = self.limits.take(key.key_id)
        if wait > 0:
            self._refuse(
                ResourceExhausted(
                    f"key {key.key_id} is over its rate limit of {self.limits.rate:g} "
                    f"requests/s (burst {self.limits.burst:g}); retry in {wait:.2f}s"
                ),
                "rate_limited",
                method,
                peer,
                key.key_id,
            )
        return key


def _wrap(auth: Authenticator, method: str, behavior, streaming: bool):
    if streaming:

        def stream(request, context):
            token = CALLER.set(auth.check(method, request, context))
            try:
                yield from behavior(request, context)
            finally:
                with contextlib.suppress(ValueError):  # a cancelled stream may be closed from another context
                    CALLER.reset(token)

        return stream

    def unary(request, context):
        token = CALLER.set(auth.check(method, request, context))
        try:
            return behavior(request, context)
        finally:
            CALLER.reset(token)

    return unary


def caller_guard() -> indexer_pb2.ScopeGuard:
    """What the indexer lets this call replace or delete: documents within the key's scopes."""
    key = CALLER.get()
    if key is None:
        return indexer_pb2.ScopeGuard()
    return indexer_pb2.ScopeGuard(enabled=True, held_scopes=list(key.scopes))


def unheld_scopes(scopes) -> list[str]:
    """The scopes among `scopes` the calling key does not hold (none with authentication off)."""
    key = CALLER.get()
    return [] if key is None else sorted({s for s in scopes if not key.holds(s)})


def caller_reads_any(scopes) -> bool:
    """Whether the calling key holds one of `scopes`, so may read what carries them (always, with authentication
    off). Public is held by every key."""
    key = CALLER.get()
    return key is None or any(key.holds(s) for s in scopes)


class AuthInterceptor(grpc.ServerInterceptor):
    """Runs inside the server's error mapping, so the domain errors raised
    here reach the caller with their own status."""

    def __init__(self, store: KeyStore, limits: TokenBuckets | None = None):
        self.auth = Authenticator(store, limits)

    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None or not handler_call_details.method.startswith(SERVICE_PREFIX):
            return handler
        method = handler_call_details.method[len(SERVICE_PREFIX) :]
        if handler.unary_unary:
            return handler._replace(unary_unary=_wrap(self.auth, method, handler.unary_unary, False))
        if handler.unary_stream:
            return handler._replace(unary_stream=_wrap(self.auth, method, handler.unary_stream, True))
        return handler
