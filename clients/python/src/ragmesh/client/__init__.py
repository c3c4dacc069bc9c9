"""Python client for the ragmesh gateway: `RagmeshClient(...).ask("question")`.

The generated messages and stubs are `ragmesh.v1` (e.g. `ragmesh.v1.gateway_pb2`).
"""

from ragmesh.client.auth import API_KEY_ENV, GATEWAY_ADDR_ENV
from ragmesh.client.client import MODES, RATINGS, Filters, Mode, RagmeshClient, RatingName, document
from ragmesh.client.retry import RetryPolicy

__all__ = [
    "API_KEY_ENV",
    "GATEWAY_ADDR_ENV",
    "MODES",
    "RATINGS",
    "Filters",
    "Mode",
    "RagmeshClient",
    "RatingName",
    "RetryPolicy",
    "document",
]
