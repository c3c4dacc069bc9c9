"""One server interceptor for cross-cutting concerns: a span per call (context taken from the
caller's metadata), a latency histogram per method, and errors counted by status code."""

import contextlib
import time

import grpc
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from shared.observability.metrics import RPC_DURATION, RPC_ERRORS
from shared.observability.tracing import tracer


def _split(full_method: str) -> tuple[str, str]:
    service, _, method = full_method.lstrip("/").partition("/")
    return service, method


@contextlib.contextmanager
def _observed(service: str, method: str, carrier: dict, context: grpc.ServicerContext):
    """The server span (continuing the caller's trace) and the metrics of one call."""
    token = otel_context.attach(propagate.extract(carrier))
    started = time.perf_counter()
    span = tracer().start_span(
        f"{service}/{method}",
        kind=SpanKind.SERVER,
        attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": method},
    )
    failed = False
    try:
        with trace.use_span(span, end_on_exit=False):
            yield
    except BaseException:
        failed = True
        raise
    finally:
        # An abort sets the code before raising; an unexpected exception leaves none (UNKNOWN).
        code = context.code() or (grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK)
        span.set_attribute("rpc.grpc.status_code", code.value[0])
        if code != grpc.StatusCode.OK:
            span.set_status(Status(StatusCode.ERROR, context.details() or ""))
            RPC_ERRORS.labels(service, method, code.name).inc()
        RPC_DURATION.labels(service, method).observe(time.perf_counter() - started)
        span.end()
        otel_context.detach(token)


class ObservabilityInterceptor(grpc.ServerInterceptor):
    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        full = handler_call_details.method
        if full.startswith("/grpc.health") or full.startswith("/grpc.reflection"):
            return handler  # probes are not traffic
        service, method = _split(full)
        carrier = dict(handler_call_details.invocation_metadata or ())

        if handler.unary_unary:
            inner = handler.unary_unary

            def unary(request, context):
                with _observed(service, method, carrier, context):
                    return inner(request, context)

            return handler._replace(unary_unary=unary)
        if handler.unary_stream:
            inner_stream = handler.unary_stream

            def stream(request, context):
                with _observed(service, method, carrier, context):
                    yield from inner_stream(request, context)

            return handler._replace(unary_stream=stream)
        return handler
