"""A real OTLP/gRPC trace receiver on loopback: the services export to it exactly as they would to
an OpenTelemetry Collector, and tests read back what arrived."""

import threading
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


def _value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


class OtlpReceiver(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self):
        self.spans: list[dict] = []
        self._lock = threading.Lock()
        self._server = None
        self.port = 0

    def Export(self, request, context):
        with self._lock:
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        self.spans.append(
                            {
                                "service": resource.get("service.name"),
                                "name": span.name,
                                "trace_id": span.trace_id.hex(),
                                "span_id": span.span_id.hex(),
                                "parent_id": span.parent_span_id.hex(),
                                "kind": span.kind,
                                "attributes": {a.key: _value(a.value) for a in span.attributes},
                            }
                        )
        return trace_service_pb2.ExportTraceServiceResponse()

    def trace(self, trace_id: str) -> list[dict]:
        with self._lock:
            return [s for s in self.spans if s["trace_id"] == trace_id]

    def spans_named(self, name: str) -> list[dict]:
        with self._lock:
            return [s for s in self.spans if s["name"] == name]

    def start(self) -> str:
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(self, self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self._server:
            self._server.stop(0)
