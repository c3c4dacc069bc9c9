"""Domain errors that carry the gRPC status a caller should see.

Domain code raises these and knows nothing of gRPC; the server bootstrap maps them to status codes.
"""

import grpc


class RagmeshError(Exception):
    code = grpc.StatusCode.INTERNAL

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidArgument(RagmeshError):
    """The caller's input is wrong; the message names the field or document."""

    code = grpc.StatusCode.INVALID_ARGUMENT

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field


class NotFound(RagmeshError):
    code = grpc.StatusCode.NOT_FOUND


class FailedPrecondition(RagmeshError):
    """The system is not in a state to serve this (e.g. an embedding-model mismatch)."""

    code = grpc.StatusCode.FAILED_PRECONDITION


class Unavailable(RagmeshError):
    """A downstream stage or engine is down: retryable."""

    code = grpc.StatusCode.UNAVAILABLE


class ResourceExhausted(RagmeshError):
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


class DeadlineExceeded(RagmeshError):
    """The caller's deadline passed (or it cancelled) before the work could be done: waiting for a slot, or
    before a write it would no longer hear of."""

    code = grpc.StatusCode.DEADLINE_EXCEEDED


class Aborted(RagmeshError):
    """A concurrent change got there first and nothing was done; sending the request again is safe."""

    code = grpc.StatusCode.ABORTED


def require(value, field: str) -> None:
    """Reject empty required request fields with a message that names them."""
    if not value:
        raise InvalidArgument(field, "is required")


class Unauthenticated(RagmeshError):
    """No usable credential: missing, unknown, revoked or expired."""

    code = grpc.StatusCode.UNAUTHENTICATED


class PermissionDenied(RagmeshError):
    """A valid credential asking for more than it holds; the message says which tenant, scope or role."""

    code = grpc.StatusCode.PERMISSION_DENIED
