"""The HTTP front door's process: `python -m services.http.server`.

Listens on RAGMESH_HTTP_HOST:RAGMESH_HTTP_PORT (default 127.0.0.1:8080) and calls the gateway at
RAGMESH_GATEWAY_ADDR (default 127.0.0.1:7070) with each caller's own API key. Ready (GET /readyz) when
the gateway answers its health check.
"""

import contextlib
import logging
from collections.abc import AsyncIterator

import anyio.to_thread
import uvicorn
from fastapi import FastAPI

from ragmesh.client import RagmeshClient
from services.http.app import create_app
from services.http.config import HttpConfig, load_config

log = logging.getLogger("ragmesh.http")


def build(cfg: HttpConfig, gateway_address: str) -> FastAPI:
    # api_key="": the front door sends each caller's key, never one of its own (nor RAGMESH_API_KEY).
    client = RagmeshClient(gateway_address, api_key="", timeout=cfg.gateway_timeout_seconds)
    app = create_app(cfg, client)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        # Route handlers block on gRPC in worker threads: this many requests wait on the gateway at once.
        anyio.to_thread.current_default_thread_limiter().total_tokens = cfg.workers
        log.info("http front door on %s:%d, gateway %s", cfg.host, cfg.port, gateway_address)
        yield
        client.close()

    app.router.lifespan_context = lifespan
    return app


def main() -> None:
    cfg, gateway_address = load_config()
    logging.basicConfig(level=cfg.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(
        build(cfg, gateway_address),
        host=cfg.host,
        port=cfg.port,
        log_level=cfg.log_level.lower(),
        timeout_graceful_shutdown=10,
    )


if __name__ == "__main__":
    main()
