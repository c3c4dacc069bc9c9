"""The FastAPI application: routes, error mapping, size limits, health and the reviewer page."""

from pathlib import Path
from typing import Any

import grpc
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from grpc_health.v1 import health_pb2, health_pb2_grpc
from starlette.exceptions import HTTPException

from ragmesh.client import RagmeshClient
from services.http import api, openai_compat
from services.http.config import HttpConfig
from services.http.errors import (
    HttpError,
    error_response,
    http_error_handler,
    rpc_error_handler,
    validation_error_handler,
)
from services.http.limits import BodyLimit

STATIC_DIR = Path(__file__).parent / "static"
# The reviewer page handles API keys: it runs only its own script and style, talks only to this server, and no
# other site may frame it (clickjacking its feedback buttons). Text from the API is set as textContent anyway.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
# HTTP statuses the framework answers itself, under the gRPC code names the gateway's errors use.
_CODE_FOR_STATUS = {404: "NOT_FOUND", 405: "UNIMPLEMENTED", 413: "RESOURCE_EXHAUSTED"}


async def _framework_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    return error_response(_CODE_FOR_STATUS.get(exc.status_code, "UNKNOWN"), exc.status_code, str(exc.detail))


def create_app(cfg: HttpConfig, client: RagmeshClient) -> FastAPI:
    app = FastAPI(
        title="ragmesh",
        version="1",
        summary="Cited answers from your documents: the gateway's API over HTTP/JSON, an OpenAI-compatible "
        "chat endpoint and a reviewer page (/review).",
    )
    app.state.gateway = client
    app.include_router(api.router)
    app.include_router(openai_compat.router)
    app.add_exception_handler(grpc.RpcError, rpc_error_handler)
    app.add_exception_handler(HttpError, http_error_handler)
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.add_exception_handler(HTTPException, _framework_error)
    app.add_middleware(
        BodyLimit, max_json=cfg.max_json_bytes, max_upload=cfg.max_upload_bytes, upload_paths=("/v1/ingest",)
    )
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.middleware("http")
    async def page_headers(request: Request, call_next) -> Response:
        response = await call_next(request)
        if request.url.path == "/review" or request.url.path.startswith("/static/"):
            response.headers.update(PAGE_HEADERS)
        return response

    @app.get("/healthz", tags=["health"], summary="The process is up")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["health"], summary="The gateway answers its health check (SERVING)")
    def readyz() -> Any:
        try:
            reply = health_pb2_grpc.HealthStub(client.channel).Check(health_pb2.HealthCheckRequest(), timeout=2.0)
            status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        except grpc.RpcError as err:
            status = f"UNREACHABLE ({err.code().name})"
        body = {
            "status": "ready" if status == "SERVING" else "not ready",
            "gateway": client.address,
            "gateway_status": status,
        }
        return JSONResponse(body, status_code=200 if status == "SERVING" else 503)

    @app.get("/", include_in_schema=False)
    def index() -> RedirectResponse:
        return RedirectResponse("/review")

    @app.get("/review", include_in_schema=False)
    def review() -> FileResponse:
        return FileResponse(STATIC_DIR / "review.html", media_type="text/html")

    return app
