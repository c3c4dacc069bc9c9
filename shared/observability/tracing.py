"""OpenTelemetry set-up and the attributes ragmesh records on its spans.

Each stage exports its spans over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or
`RAGMESH_OTLP_ENDPOINT`) is set. The transport is traced by opentelemetry-instrumentation-grpc: a
server span per call, a client span per stage call, and the context carried in gRPC metadata (W3C
traceparent); ragmesh's domain spans (retrieval, rerank, generate) and attributes sit inside them.
Attribute names follow OpenTelemetry's GenAI conventions where they fit (`gen_ai.*`); the
per-stage scores that explain a ranking are ragmesh's own (`ragmesh.*`).
"""

import hashlib
import json
import logging

import grpc
from opentelemetry import trace
from opentelemetry.instrumentation.grpc import client_interceptor, filters, server_interceptor
from opentelemetry.instrumentation.grpc.grpcext import intercept_channel
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from shared import config

log = logging.getLogger("ragmesh.tracing")
TRACER_NAME = "ragmesh"
# RAGMESH_REDACT_QUERIES as read by setup_tracing: a stage's queries need not re-read the environment each.
_redact_queries: bool | None = None


def setup_tracing(stage: str, exporter: SpanExporter | None = None) -> TracerProvider:
    """Install a tracer provider for this process. Without an endpoint (or exporter) spans are not sampled:
    their context (trace id) still propagates and names the answer, but nothing records attributes no one would
    read."""
    global _redact_queries
    settings = config.mesh()
    _redact_queries = settings.redact_queries or settings.privacy == "strict"  # strict privacy: no query text
    endpoint = settings.otlp_endpoint
    if exporter is None and endpoint:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        exporter = OTLPSpanExporter(endpoint=endpoint, insecure=True)
        log.info("%s: exporting spans over OTLP to %s", stage, endpoint)
    provider = TracerProvider(
        resource=Resource.create({"service.name": f"ragmesh-{stage}"}),
        # None: the SDK's default (parent-based, always on) or OTEL_TRACES_SAMPLER.
        sampler=None if exporter is not None else ALWAYS_OFF,
    )
    if exporter is not None:
        provider.add_span_processor(BatchSpanProcessor(exporter, schedule_delay_millis=200))
    trace.set_tracer_provider(provider)
    return provider


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


def server_tracing() -> grpc.ServerInterceptor:
    """A server span per call, continuing the caller's trace; health probes and reflection are not traffic."""
    probes = filters.any_of(filters.health_check(), filters.service_prefix("grpc.reflection"))
    return server_interceptor(filter_=filters.negate(probes))


def traced_channel(channel: grpc.Channel) -> grpc.Channel:
    """The channel with a client span per call, whose context travels to the callee in the metadata."""
    return intercept_channel(channel, client_interceptor())


def query_attribute(query: str) -> tuple[str, str]:
    """The query itself, or only its hash when RAGMESH_REDACT_QUERIES is on."""
    if _redact_queries is None:
        settings = config.mesh()
        redact = settings.redact_queries or settings.privacy == "strict"
    else:
        redact = _redact_queries
    if redact:
        return "ragmesh.query.sha256", hashlib.sha256(query.encode()).hexdigest()
    return "ragmesh.query", query


def annotate_query(span, tenant_id: str, query: str) -> None:
    key, value = query_attribute(query)
    span.set_attribute(key, value)
    span.set_attribute("ragmesh.tenant_id", tenant_id)


def annotate_documents(span, candidates, score: str) -> None:
    """GenAI convention: gen_ai.retrieval.documents as a JSON list of {id, score}."""
    if not span.is_recording():  # an unsampled span: building the list would be wasted
        return
    span.set_attribute(
        "gen_ai.retrieval.documents",
        json.dumps([{"id": c.chunk.chunk_id, "score": round(float(getattr(c.scores, score)), 6)} for c in candidates]),
    )


def annotate_candidates(span, prefix: str, candidates) -> None:
    """Chunk ids with every stage's rank and score, as parallel arrays (one entry per chunk)."""
    if not span.is_recording():
        return
    scores = [c.scores for c in candidates]
    span.set_attribute(f"{prefix}.chunk_ids", [c.chunk.chunk_id for c in candidates])
    span.set_attribute(f"{prefix}.count", len(candidates))
    for name in ("bm25_rank", "dense_rank", "fused_rank", "rerank_rank"):
        span.set_attribute(f"{prefix}.{name}", [int(getattr(s, name)) for s in scores])
    for name in ("bm25_score", "dense_score", "fused_score", "rerank_score"):
        span.set_attribute(f"{prefix}.{name}", [float(getattr(s, name)) for s in scores])
