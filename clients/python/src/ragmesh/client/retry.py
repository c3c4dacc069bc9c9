"""Which gateway calls are retried, and how: gRPC's own retry policy (a service config), not a loop here.

Only UNAVAILABLE is retried, and only for calls that are safe to run twice: reads (Search, GetChunk,
ListDocuments, ListFeedback, Ask: a second Ask logs a second answer, nothing else) and writes that converge
(DeleteDocument; Ingest, whose unchanged chunks are kept as they are, and which gRPC retries only until the
first result has arrived). Feedback and Erase are never retried: a second try would store the verdict (the
erasure report) twice. The gateway marks an UNAVAILABLE that its own handler returned (a stage behind it is
down) with a negative retry pushback, so gRPC retries only calls that never reached it. Backoff is
exponential with gRPC's jitter; the call's deadline bounds every attempt together.
"""

import dataclasses
import json

SERVICE = "ragmesh.v1.Gateway"
RETRIED_METHODS = ("Ask", "Search", "GetChunk", "DeleteDocument", "Ingest", "ListDocuments", "ListFeedback")
# Erase stores a report per call (one erasure, one report); RecordFeedbackExport records an export per call.
NOT_RETRIED_METHODS = ("Feedback", "Erase", "RecordFeedbackExport")
RETRYABLE_CODES = ("UNAVAILABLE",)
# Round robin over every address the target resolves to: a `dns:///` name listing several gateways spreads the
# calls (gRPC keeps one connection per address); a target of one address is one connection, as with pick_first.
ROUND_ROBIN = {"loadBalancingConfig": [{"round_robin": {}}]}


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """gRPC allows at most 5 attempts; backoffs are the upper bounds of gRPC's random jitter."""

    max_attempts: int = 4
    initial_backoff: float = 0.2
    max_backoff: float = 2.0
    multiplier: float = 2.0

    def __post_init__(self) -> None:
        if not 2 <= self.max_attempts <= 5:
            raise ValueError(f"max_attempts must be 2..5 (gRPC's limit), not {self.max_attempts}")
        if self.initial_backoff <= 0 or self.max_backoff < self.initial_backoff or self.multiplier < 1:
            raise ValueError("backoffs must be positive, max_backoff >= initial_backoff, multiplier >= 1")

    def service_config(self) -> str:
        """The channel's `grpc.service_config`: round robin over the addresses the target resolves to (a
        `dns:///` name of several gateways; one address is one), the policy for the retried methods, none for
        the others."""
        policy = {
            "maxAttempts": self.max_attempts,
            "initialBackoff": f"{self.initial_backoff}s",
            "maxBackoff": f"{self.max_backoff}s",
            "backoffMultiplier": self.multiplier,
            "retryableStatusCodes": list(RETRYABLE_CODES),
        }
        return json.dumps(
            {
                **ROUND_ROBIN,
                "methodConfig": [
                    {"name": [{"service": SERVICE, "method": m} for m in RETRIED_METHODS], "retryPolicy": policy}
                ],
            }
        )
