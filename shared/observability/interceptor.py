"""The server interceptor for ragmesh's own per-call concerns: a latency histogram per method and errors
counted by status code. The call's span is opentelemetry-instrumentation-grpc's (shared/observability/
tracing.py, installed outside this one); this names it as OpenTelemetry's RPC conventions do."""

import contextlib
import time
from collections.abc import Iterator

import grpc
from opentelemetry import trace

from shared.observability.metrics import RPC_DURATION, RPC_ERRORS


def _split(full_method: str) -> tuple[str, str]:
    service, _, method = full_method.lstrip("/").partition("/")
    return service, method


@contextlib.contextmanager
def _observed(service: str, method: str, context: grpc.ServicerContext) -> Iterator[None]:
    """The metrics of one call; the instrumentation's server span is the current span here."""
    # "ragmesh.v1.Gateway/Ask", the conventions' `$service/$method` (the instrumentation uses the raw path).
    trace.get_current_span().update_name(f"{service}/{method}")
    started = time.perf_counter()
    failed = False
    try:
        yield
    except BaseException:
        failed = True
        raise
    finally:
        # An abort sets the code before raising; an unexpected exception leaves none (UNKNOWN).
        code = context.code() or (grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK)
        if code != grpc.StatusCode.OK:
            RPC_ERRORS.labels(service, method, code.name).inc()
        RPC_DURATION.labels(service, method).observe(time.perf_counter() - started)


class ObservabilityInterceptor(grpc.ServerInterceptor):
    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        full = handler_call_details.method
        if full.startswith("/grpc.health") or full.startswith("/grpc.reflection"):
            return handler  # probes are not traffic
        service, method = _split(full)

        if handler.unary_unary:
            inner = handler.unary_unary

            def unary(request, context):
                with _observed(service, method, context):
                    return inner(request, context)

            return handler._replace(unary_unary=unary)
        if handler.unary_stream:
            inner_stream = handler.unary_stream

            def stream(request, context):
                with _observed(service, method, context):
                    yield from inner_stream(request, context)

            return handler._replace(unary_stream=stream)
        return handler
