"""Calls from one stage to another: deadline propagation and errors that name the stage."""

import ipaddress
import json
import socket
from dataclasses import dataclass
from typing import Any

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
# Round robin over every address the target gives (replicas of a stage): gRPC keeps one HTTP/2 connection per
# address and picks only connected ones, so a retried call lands on a replica that is up.
_SERVICE_CONFIG = json.dumps(
    {
        "loadBalancingConfig": [{"round_robin": {}}],
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

    def __init__(self, stage: str, address: str, err: grpc.RpcError | OSError, cap: float | None = None):
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


DNS_SCHEME = "dns:///"


def _host_port(address: str, setting: str) -> tuple[str, str]:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"{setting}: {address!r} is not host:port")
    return host.strip("[]"), port


def channel_target(address: str, setting: str = "stage address") -> tuple[str, str | None]:
    """The gRPC target for a stage address, and the authority a TLS certificate is checked against (None: the
    target's own). An address is one of:
    - `host:port`, one server;
    - `dns:///name:port`, every address the name resolves to (a headless Kubernetes Service: one per ready
      pod), re-resolved when a connection drops;
    - `127.0.0.1:50053,127.0.0.1:50063`, replicas on fixed IPv4 addresses (`ragmesh up --replicas`).
    Calls go round robin over the addresses."""
    if "," not in address:
        return address, None
    parts = [part.strip() for part in address.split(",")]
    hosts = []
    for part in parts:
        host, _ = _host_port(part, setting)
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ValueError(f"{setting}: replicas are listed by IPv4 address and port, not {part!r}") from None
        hosts.append(host)
    return "ipv4:" + ",".join(parts), hosts[0]


def _dns_name(address: str) -> str | None:
    """The host name of a `dns:///name:port` address (None for any other form)."""
    if not address.startswith(DNS_SCHEME):
        return None
    return _host_port(address.removeprefix(DNS_SCHEME), "stage address")[0]


def replica_addresses(address: str) -> list[str]:
    """Each replica's own address, for a call every replica must receive (erasure's Forget): the listed ones,
    or what a `dns:///` name resolves to now; a plain `host:port` is one server."""
    if "," in address:
        return [part.strip() for part in address.split(",")]
    if not address.startswith(DNS_SCHEME):
        return [address]
    host, port = _host_port(address.removeprefix(DNS_SCHEME), "stage address")
    found = {str(info[4][0]) for info in socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)}
    return [f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}" for ip in sorted(found)]


def _channel(stage: str, address: str, authority: str | None) -> grpc.Channel:
    target, own_authority = channel_target(address, f"RAGMESH_{stage.upper()}_ADDR")
    authority = authority or own_authority
    options = [*CHANNEL_OPTIONS, *([("grpc.default_authority", authority)] if authority else [])]
    # mTLS with the gateway's certificate when the mesh has a TLS folder (shared/tls.py).
    return stage_channel(target, stage, "gateway", options=options)


@dataclass
class ReplicaReply:
    """One replica's answer to a call made to every replica: the reply, or the error that named it."""

    address: str
    reply: Any = None  # the method's response message
    error: "StageCallError | None" = None


class StageClient:
    """A channel to one stage (round robin over its replicas). Calls inherit the caller's remaining deadline."""

    def __init__(self, stage: str, address: str, stub_cls, default_timeout: float = 30.0):
        self.stage = stage
        self.address = address
        self.default_timeout = default_timeout
        self._stub_cls = stub_cls
        self._channel = _channel(stage, address, None)
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
        return self._call(self._stub, self.address, method, request, context, share, cap)

    def call_each(self, method: str, request, context: grpc.ServicerContext | None = None) -> list[ReplicaReply]:
        """The call made once to every replica (replica_addresses), each on its own channel; a replica that
        fails is reported with its error, and the others are still called."""
        try:
            addresses = replica_addresses(self.address)
        except OSError as err:  # a name that does not resolve: no replica can be reached (UNAVAILABLE, naming it)
            raise StageCallError(self.stage, self.address, err) from None
        if addresses == [self.address]:  # one server: this client's own channel
            return [self._reply(self._stub, self.address, method, request, context)]
        # A replica's channel is checked against the name the stage's certificate holds, not the pod's address.
        authority = _dns_name(self.address) or channel_target(self.address)[1]
        replies = []
        for address in addresses:
            channel = _channel(self.stage, address, authority)
            try:
                stub = self._stub_cls(traced_channel(channel))
                replies.append(self._reply(stub, address, method, request, context))
            finally:
                channel.close()
        return replies

    def _reply(self, stub, address: str, method: str, request, context) -> ReplicaReply:
        try:
            return ReplicaReply(address, reply=self._call(stub, address, method, request, context))
        except StageCallError as err:
            return ReplicaReply(address, error=err)

    def _call(self, stub, address: str, method: str, request, context, share: float = 1.0, cap: float | None = None):
        cap = self.default_timeout if cap is None else cap
        timeout = self._timeout(context, share, cap)
        try:
            return getattr(stub, method)(request, timeout=timeout)
        except grpc.RpcError as err:
            capped = timeout >= cap  # the gateway's limit, not the caller's deadline, ended it
            error = StageCallError(self.stage, address, err, cap if capped else None)
            # The instrumentation's client span ended with the status; the caller's span records which stage.
            trace.get_current_span().add_event(
                "stage call failed", {"ragmesh.stage": self.stage, "message": error.message}
            )
            raise error from None

    def close(self) -> None:
        self._channel.close()
