"""The server's error mapping over real gRPC: a handler's own abort keeps its status."""

from concurrent import futures

import grpc
import pytest

from shared.errors import NotFound
from shared.server import DomainErrorInterceptor


def _serve(behavior, streaming=False):
    handler = (grpc.unary_stream_rpc_method_handler(behavior) if streaming
               else grpc.unary_unary_rpc_method_handler(behavior))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2), interceptors=[DomainErrorInterceptor("test")])
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("t.T", {"M": handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


def _call(port, streaming=False):
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        if streaming:
            return list(channel.unary_stream("/t.T/M")(b"", timeout=10))
        return channel.unary_unary("/t.T/M")(b"", timeout=10)


def aborts(request, context):
    context.abort(grpc.StatusCode.NOT_FOUND, "no such answer")


def aborts_streaming(request, context):
    yield b"first"
    context.abort(grpc.StatusCode.PERMISSION_DENIED, "not yours")


def raises_domain_error(request, context):
    raise NotFound("gone")


def crashes(request, context):
    raise KeyError("boom")


@pytest.mark.parametrize("behavior, streaming, code, detail", [
    (aborts, False, grpc.StatusCode.NOT_FOUND, "no such answer"),
    (aborts_streaming, True, grpc.StatusCode.PERMISSION_DENIED, "not yours"),
    (raises_domain_error, False, grpc.StatusCode.NOT_FOUND, "gone"),
    (crashes, False, grpc.StatusCode.INTERNAL, "test: internal error: KeyError"),
])
def test_statuses_reach_the_caller(caplog, behavior, streaming, code, detail):
    server, port = _serve(behavior, streaming)
    try:
        with pytest.raises(grpc.RpcError) as err:
            _call(port, streaming)
    finally:
        server.stop(None)
    assert err.value.code() == code and detail in err.value.details()
    if code != grpc.StatusCode.INTERNAL:
        assert "unhandled error" not in caplog.text
