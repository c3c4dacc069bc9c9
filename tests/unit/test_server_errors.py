"""The server's error mapping over real gRPC: a handler's own abort keeps its status."""

from concurrent import futures

import grpc
import pytest

from shared.errors import NotFound
from shared.server import DomainErrorInterceptor


def _serve(behavior, streaming=False):
    handler = (
        grpc.unary_stream_rpc_method_handler(behavior) if streaming else grpc.unary_unary_rpc_method_handler(behavior)
    )
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


@pytest.mark.parametrize(
    "behavior, streaming, code, detail",
    [
        (aborts, False, grpc.StatusCode.NOT_FOUND, "no such answer"),
        (aborts_streaming, True, grpc.StatusCode.PERMISSION_DENIED, "not yours"),
        (raises_domain_error, False, grpc.StatusCode.NOT_FOUND, "gone"),
        (crashes, False, grpc.StatusCode.INTERNAL, "test: internal error: KeyError"),
    ],
)
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


def test_an_unavailable_the_handler_returned_is_not_retried_by_stage_clients():
    """The stage's own UNAVAILABLE (its engine is down) ran the handler once; retrying would run it again."""
    from shared.clients import StageCallError, StageClient
    from shared.errors import Unavailable

    calls = []

    def engine_down(request, context):
        calls.append(1)
        raise Unavailable("triton at 127.0.0.1:1 is down")

    server, port = _serve(engine_down)

    class _Stub:
        def __init__(self, channel):
            self.M = channel.unary_unary("/t.T/M")

    try:
        client = StageClient("test", f"127.0.0.1:{port}", _Stub, default_timeout=10)
        with pytest.raises(StageCallError) as err:
            client.call("M", b"")
        client.close()
    finally:
        server.stop(None)
    assert err.value.downstream_code == grpc.StatusCode.UNAVAILABLE and "triton" in err.value.message
    assert len(calls) == 1
