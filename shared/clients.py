"""Calls from one stage to another: deadline propagation and errors that name the stage."""

import json

import grpc
from opentelemetry import trace

from shared.errors import RagmeshError
from shared.observability.tracing import traced_channel
from shared.tls import stage_channel

# A restarted stage is found again within a second or two: short reconnect backoff, and a couple of
# retries of UNAVAILABLE, the one retryable code, for calls that never reached the stage (nothing ran).
# An UNAVAILABLE the stage's handler returned itself carries a negative `grpc-retry-pushback-ms`
# (shared/server.py), which gRPC's retry policy honours by not retrying. Throttling stops retries when
# most recent calls to that stage fail, so a stage that stays down fails fast with a status naming it.
_SERVICE_CONFIG = json.dumps(
    {
        "methodConfig": [
            {
                "name": [{}],
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.2s",
                    "maxBackoff": "1s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
        "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1},
    }
)
CHANNEL_OPTIONS = [
    ("grpc.service_config", _SERVICE_CONFIG),
    ("grpc.enable_retries", 1),
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
]

# Statuses that describe the caller's request: passed through unchanged, prefixed with the stage.
_PASS_THROUGH = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
}


class StageCallError(RagmeshError):
    """A downstream stage failed; the status says what the caller can do, the message says where."""

    def __init__(self, stage: str, address: str, err: grpc.RpcError, cap: float | None = None):
        """`cap`: the gateway's own limit on this stage's calls, when that (not the caller's deadline) ended it."""
        code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
        detail = err.details() if hasattr(err, "details") else str(err)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED and cap is not None:
            # A longer client deadline would not help: say which setting bounds it.
            self.code = code
            settings = f"RAGMESH_GATEWAY_{stage.upper()}_TIMEOUT_SECONDS"
            if stage == "indexer":  # a long document's limit grows with its chunks (services/gateway/funnel.py)
                settings += ", or RAGMESH_GATEWAY_INDEXER_SECONDS_PER_CHUNK for a long document"
            message = f"{stage} stage: no answer within the gateway's {cap:g} s limit on its calls ({settings})"
        elif code in _PASS_THROUGH:
            self.code = code
            message = f"{stage} stage: {detail}"
        else:
            # UNAVAILABLE, INTERNAL, UNKNOWN...: the stage is down or broken; retryable from the caller's view.
            self.code = grpc.StatusCode.UNAVAILABLE
            message = f"{stage} stage at {address} failed ({code.name}): {detail}"
        super().__init__(message)
        self.stage = stage
        self.downstream_code = code


class StageClient:
    """A channel to one stage. Calls inherit the caller's remaining deadline."""

    def __init__(self, stage: str, address: str, stub_cls, default_timeout: float = 30.0):
        self.stage = stage
        self.address = address
        self.default_timeout = default_timeout
        # mTLS with the gateway's certificate when the mesh has a TLS folder (shared/tls.py).
        self._channel = stage_channel(address, stage, "gateway", options=CHANNEL_OPTIONS)
        # The instrumentation's client span per call carries the trace to the stage.
        self._stub = stub_cls(traced_channel(self._channel))

    def _timeout(self, context: grpc.ServicerContext | None, share: float = 1.0, cap: float | None = None) -> float:
        cap = self.default_timeout if cap is None else cap
        remaining = context.time_remaining() if context is not None else None
        if remaining is None:
            return cap
        return max(0.0, min(cap, remaining * share))

    def call(
        self,
        method: str,
        request,
        context: grpc.ServicerContext | None = None,
        share: float = 1.0,
        cap: float | None = None,
    ):
        """`share` < 1 leaves the rest of the caller's remaining time for what comes after this call; `cap`
        replaces the stage's own limit for this call (the default_timeout)."""
        cap = self.default_timeout if cap is None else cap
        timeout = self._timeout(context, share, cap)
        try:
            return getattr(self._stub, method)(request, timeout=timeout)
        except grpc.RpcError as err:
            capped = timeout >= cap  # the gateway's limit, not the caller's deadline, ended it
            error = StageCallError(self.stage, self.address, err, cap if capped else None)
            # The instrumentation's client span ended with the status; the caller's span records which stage.
            trace.get_current_span().add_event(
                "stage call failed", {"ragmesh.stage": self.stage, "message": error.message}
            )
            raise error from None

    def close(self) -> None:
        self._channel.close()
