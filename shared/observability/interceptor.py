"""One server interceptor for cross-cutting concerns: a span per call (context taken from the
caller's metadata), a latency histogram per method, and errors counted by status code."""

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


class ObservabilityInterceptor(grpc.ServerInterceptor):
    def intercept_service(self, continuation, handler_call_details):
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        full = handler_call_details.method
        if full.startswith("/grpc.health") or full.startswith("/grpc.reflection"):
            return handler  # probes are not traffic
        service, method = _split(full)
        carrier = {k: v for k, v in (handler_call_details.invocation_metadata or ())}

        def begin():
            ctx = propagate.extract(carrier)
            token = otel_context.attach(ctx)
            span = tracer().start_span(f"{service}/{method}", kind=SpanKind.SERVER, attributes={
                "rpc.system": "grpc", "rpc.service": service, "rpc.method": method})
            return token, span, trace.use_span(span, end_on_exit=False), time.perf_counter()

        def finish(token, span, scope, started, context, failed: BaseException | None):
            code = context.code() if hasattr(context, "code") else None
            if failed is not None and code is None:
                code = grpc.StatusCode.UNKNOWN
            code = code or grpc.StatusCode.OK
            span.set_attribute("rpc.grpc.status_code", code.value[0])
            if code != grpc.StatusCode.OK:
                span.set_status(Status(StatusCode.ERROR, context.details() if hasattr(context, "details") else ""))
                RPC_ERRORS.labels(service, method, code.name).inc()
            RPC_DURATION.labels(service, method).observe(time.perf_counter() - started)
            scope.__exit__(None, None, None)
            span.end()
            otel_context.detach(token)

        if handler.unary_unary:
            inner = handler.unary_unary

            def unary(request, context):
                token, span, scope, started = begin()
                scope.__enter__()
                failed = None
                try:
                    return inner(request, context)
                except BaseException as exc:
                    failed = exc
                    raise
                finally:
                    finish(token, span, scope, started, context, failed)

            return handler._replace(unary_unary=unary)
        if handler.unary_stream:
            inner_stream = handler.unary_stream

            def stream(request, context):
                token, span, scope, started = begin()
                scope.__enter__()
                failed = None
                try:
                    yield from inner_stream(request, context)
                except BaseException as exc:
                    failed = exc
                    raise
                finally:
                    finish(token, span, scope, started, context, failed)

            return handler._replace(unary_stream=stream)
        return handler
