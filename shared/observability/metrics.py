"""Every Prometheus metric ragmesh exports, in one naming scheme: ragmesh_<area>_<what>_<unit>."""

import logging

from prometheus_client import Counter, Gauge, Histogram, start_http_server

log = logging.getLogger("ragmesh.metrics")

# Every latency budget in deploy/observability/budgets.yaml is a boundary here (`make check-alerts` checks), so
# histogram_quantile is exact where an alert or a load test compares a quantile with its budget.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.4, 0.5, 1, 2, 2.5, 5, 10, 30, 60)
SIZE_BUCKETS = (0, 1, 2, 5, 8, 10, 20, 50, 100, 200, 500)

RPC_DURATION = Histogram(
    "ragmesh_rpc_duration_seconds", "Server-side gRPC call latency", ["service", "method"], buckets=LATENCY_BUCKETS
)
RPC_ERRORS = Counter(
    "ragmesh_rpc_errors_total", "gRPC calls that ended with a non-OK status", ["service", "method", "code"]
)
STAGE_DURATION = Histogram(
    "ragmesh_stage_duration_seconds",
    "Time the gateway spent in each funnel stage, as the caller sees it (includes transport)",
    ["stage"],
    buckets=LATENCY_BUCKETS,
)
ADMISSION_WAIT = Histogram(
    "ragmesh_gateway_admission_wait_seconds",
    "Time an Ask or Search waited for one of the gateway's in-flight slots (RAGMESH_GATEWAY_MAX_IN_FLIGHT)",
    ["rpc"],
    # Finer at the bottom: a call that finds a free slot waits microseconds, which the first latency bucket
    # (1 ms) would report as half a millisecond.
    buckets=(0.0001, 0.0005, *LATENCY_BUCKETS),
)
CANDIDATES = Histogram(
    "ragmesh_retrieval_candidates", "Candidates returned per retrieval", ["mode"], buckets=SIZE_BUCKETS
)
RERANK_BATCH = Histogram("ragmesh_rerank_batch_size", "Candidates per rerank request", buckets=SIZE_BUCKETS)
RERANK_VIEW_SOURCES = Counter(
    "ragmesh_rerank_view_vectors_total",
    "Candidates the maxsim reranker scored, by where their view vectors came from: stored (with the chunk at "
    "ingest), cache (embedded by an earlier query), embedded (at query time)",
    ["source"],
)
RERANK_QUERY_SOURCES = Counter(
    "ragmesh_rerank_query_vectors_total",
    "Queries the maxsim reranker scored, by where the query vector came from: given (the retriever's, passed on "
    "by the gateway) or embedded (by the reranker)",
    ["source"],
)
ANSWERS = Counter("ragmesh_answers_total", "Ask outcomes", ["outcome"])
ABSTENTIONS = Counter("ragmesh_abstentions_total", "Questions answered with not-found", ["reason"])
CITATION_FAILURES = Counter(
    "ragmesh_citation_failures_total", "Generated answers rejected by citation validation", ["reason"]
)
DEGRADED = Counter("ragmesh_degraded_answers_total", "Answers served without a stage (fused order)", ["stage"])
READ_AS = Counter(
    "ragmesh_questions_read_as_total",
    "Asks and Searches run again as read: a misspelled word as a passage word, without a greeting around it, or"
    " without sentences pasted from a passage",
)
SEPARATE_QUESTIONS = Counter(
    "ragmesh_separate_questions_total",
    "Asks of a message asking several separate questions, answered question by question",
)
INDEX_CHUNKS = Gauge("ragmesh_index_chunks", "Chunks stored in the index (all tenants)", ["backend"])
INGESTED_DOCUMENTS = Counter("ragmesh_ingest_documents_total", "Documents through ingestion", ["outcome"])
INGEST_LAG = Histogram(
    "ragmesh_ingest_lag_seconds", "From a document accepted by the gateway to searchable", buckets=LATENCY_BUCKETS
)
INGEST_OLDEST_PENDING = Gauge(
    "ragmesh_ingest_oldest_pending_age_seconds",
    "Age of the oldest document accepted but not yet searchable (0 when none)",
)
AUTH_FAILURES = Counter(
    "ragmesh_auth_failures_total", "Gateway calls refused for their credential (never the key itself)", ["reason"]
)
STAGE_RESTARTS = Counter(
    "ragmesh_stage_restarts_total", "Stage processes `ragmesh up` restarted after they exited", ["stage"]
)
SOURCE_CHANGED = Counter(
    "ragmesh_index_source_changed_total", "Documents re-ingested whose source changed after they were indexed"
)


def start_metrics_server(stage: str, host: str, port: int) -> None:
    if port <= 0:
        return
    start_http_server(port, addr=host)
    log.info("%s: Prometheus metrics on http://%s:%d/metrics", stage, host, port)
