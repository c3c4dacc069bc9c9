"""Request size limits, enforced before a body is parsed: by Content-Length when the caller sends one,
and by counting the bytes as they arrive otherwise (chunked uploads)."""

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.http.errors import error_response

TOO_LARGE = 413


class BodyTooLarge(HTTPException):
    def __init__(self, limit: int):
        super().__init__(TOO_LARGE, f"request body over this route's limit of {limit} bytes")


class BodyLimit:
    """At most `max_upload` bytes for the upload routes, `max_json` for every other route."""

    def __init__(self, app: ASGIApp, max_json: int, max_upload: int, upload_paths: tuple[str, ...]):
        self.app = app
        self.max_json = max_json
        self.max_upload = max_upload
        self.upload_paths = upload_paths

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_upload if scope["path"] in self.upload_paths else self.max_json
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            response = error_response("RESOURCE_EXHAUSTED", TOO_LARGE, BodyTooLarge(limit).detail)
            await response(scope, receive, send)
            return
        received = 0

        async def counted() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)  # FastAPI passes HTTP exceptions through its body parsing
            return message

        await self.app(scope, counted, send)
