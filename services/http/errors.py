"""gRPC status -> HTTP status, with a JSON body that keeps the gateway's code name and message.

Body: {"error": {"code": "NOT_FOUND", "status": 404, "message": "<the gRPC message>"}}. The OpenAI
clients read error.message and error.code from the same shape. The mapping is the one Google's API
design guide gives for gRPC codes.
"""

import grpc
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel

HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
    grpc.StatusCode.UNAUTHENTICATED: 401,
}


class ErrorDetail(BaseModel):
    code: str
    status: int
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail


# For the OpenAPI document: what each route may answer besides 200.
ERROR_RESPONSES: dict[int | str, dict] = {
    status: {"model": ErrorBody, "description": description}
    for status, description in (
        (400, "INVALID_ARGUMENT / FAILED_PRECONDITION: the message names the field or document"),
        (401, "UNAUTHENTICATED: no usable API key (Authorization: Bearer <key>)"),
        (403, "PERMISSION_DENIED: the key may not do this (tenant, scope or role)"),
        (404, "NOT_FOUND"),
        (413, "request body over the front door's size limit"),
        (429, "RESOURCE_EXHAUSTED: over the key's rate"),
        (503, "UNAVAILABLE: the gateway or a stage behind it is down; retry"),
        (504, "DEADLINE_EXCEEDED"),
    )
}


class HttpError(Exception):
    """An error the front door itself answers, under a gRPC code name like the gateway's."""

    def __init__(self, code: grpc.StatusCode, message: str, status: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status or HTTP_STATUS[code]


def error_response(code_name: str, status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = ErrorBody(error=ErrorDetail(code=code_name, status=status, message=message))
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


async def rpc_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, grpc.RpcError)
    code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return error_response(code.name, HTTP_STATUS.get(code, 500), details or code.name)


async def http_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HttpError)
    return error_response(exc.code.name, exc.status, exc.message)


async def validation_error_handler(_request: Request, exc: Exception) -> JSONResponse:
    """A malformed body is the caller's INVALID_ARGUMENT, with the field named, like the gateway's."""
    assert isinstance(exc, RequestValidationError)
    problems = []
    for err in exc.errors():
        kind = err.get("type")
        if kind == "json_invalid":  # its location is a character offset, not a field
            reason = err.get("ctx", {}).get("error", "")
            problems.append(f"body: not valid JSON ({reason} at character {err['loc'][-1]})")
            continue
        where = ".".join(str(part) for part in err.get("loc", ()) if part != "body") or "body"
        message = "not a field of this request" if kind == "extra_forbidden" else err.get("msg", "invalid")
        problems.append(f"{where}: {message}")
    return error_response("INVALID_ARGUMENT", 400, "; ".join(problems))
