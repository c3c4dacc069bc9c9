"""Traces across the mesh and Prometheus metrics, read back from the running services."""

import os
import threading
import time
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from shared.config import STAGES
from shared.stubs import gateway_pb2
from tests.support.mesh import TENANT, ingest_paths

pytestmark = pytest.mark.integration
# OTLP's SpanKind numbers.
SPAN_KIND_SERVER, SPAN_KIND_CLIENT = 2, 3


def traced_ask(gateway, question):
    trace_id = os.urandom(16).hex()
    metadata = (("traceparent", f"00-{trace_id}-{os.urandom(8).hex()}-01"),)
    response = gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=question), timeout=60, metadata=metadata)
    return trace_id, response


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return predicate()


def test_one_trace_records_the_chunks_and_scores_behind_the_answer(gateway, ingested, otlp):
    trace_id, response = traced_ask(gateway, "how much is the Team plan per month")
    assert not response.answer.abstained and not response.degraded, response.degraded_reason

    def complete():
        spans = otlp.trace(trace_id)
        names = {s["name"] for s in spans}
        return spans if {"retrieval", "rerank", "generate", "ragmesh.v1.Gateway/Ask"} <= names else None

    spans = wait_for(complete)
    assert spans, f"incomplete trace: {sorted({s['name'] for s in otlp.trace(trace_id)})}"
    services = {s["service"] for s in spans}
    assert {"ragmesh-gateway", "ragmesh-retriever", "ragmesh-reranker", "ragmesh-generator"} <= services
    by_name = {s["name"]: s["attributes"] for s in spans}

    retrieval = by_name["retrieval"]
    returned = {p.chunk.chunk_id: p.scores for p in response.context}
    ids = retrieval["ragmesh.retrieval.chunk_ids"]
    for chunk_id, scores in returned.items():
        i = ids.index(chunk_id)
        assert retrieval["ragmesh.retrieval.fused_score"][i] == pytest.approx(scores.fused_score, rel=1e-5)
        assert retrieval["ragmesh.retrieval.bm25_rank"][i] == scores.bm25_rank
        assert retrieval["ragmesh.retrieval.dense_rank"][i] == scores.dense_rank
    assert retrieval["ragmesh.query"] == "how much is the Team plan per month"
    assert "gen_ai.retrieval.documents" in retrieval

    rerank = by_name["rerank"]
    for chunk_id, scores in returned.items():
        i = rerank["ragmesh.rerank.chunk_ids"].index(chunk_id)
        assert rerank["ragmesh.rerank.rerank_score"][i] == pytest.approx(scores.rerank_score, rel=1e-5)

    gateway_span = by_name["ragmesh.v1.Gateway/Ask"]
    assert gateway_span["ragmesh.answer.cited_chunk_ids"] == [c.chunk_id for c in response.answer.citations]
    assert gateway_span["ragmesh.abstain.decision"] == "proceed"
    assert gateway_span["ragmesh.abstain.threshold"] == pytest.approx(response.abstain_threshold)
    assert by_name["generate"]["gen_ai.usage.input_tokens"] > 0
    assert by_name["generate"]["gen_ai.operation.name"] == "extract"
    assert by_name["generate"]["gen_ai.provider.name"] == "ragmesh"
    assert by_name["generate"]["gen_ai.request.model"].startswith("extractive-")


def test_the_instrumentation_carries_the_gateways_trace_to_every_stage(gateway, ingested, otlp):
    """No traceparent from the client: the trace starts at the gateway's server span, and the gRPC
    instrumentation's client spans carry it to each stage, whose server and domain spans join it."""
    response = gateway.Ask(
        gateway_pb2.AskRequest(tenant_id=TENANT, question="how much is the Team plan per month"), timeout=60
    )
    # An answer, not an abstention at the gate: only then does the trace reach the generator.
    assert not response.answer.abstained, response.answer.reason
    trace_id = response.trace_id

    def whole_trace():
        spans = otlp.trace(trace_id)
        names = {s["name"] for s in spans}
        return spans if {"ragmesh.v1.Gateway/Ask", "rerank", "generate"} <= names else None

    spans = wait_for(whole_trace)
    assert spans, f"incomplete trace: {sorted({s['name'] for s in otlp.trace(trace_id)})}"
    by_id = {s["span_id"]: s for s in spans}
    (gateway_span,) = [s for s in spans if s["name"] == "ragmesh.v1.Gateway/Ask"]
    assert gateway_span["service"] == "ragmesh-gateway" and gateway_span["kind"] == SPAN_KIND_SERVER
    assert gateway_span["parent_id"] in ("", "0" * 16)  # the trace's root: nothing came from the client
    for domain, service in (("retrieval", "retriever"), ("rerank", "reranker"), ("generate", "generator")):
        (span,) = [s for s in spans if s["name"] == domain]
        # domain span <- the stage's server span <- the gateway's client span <- ... <- the gateway's server span
        server = by_id[span["parent_id"]]
        assert (server["service"], server["kind"]) == (f"ragmesh-{service}", SPAN_KIND_SERVER), server
        assert server["attributes"]["rpc.system"] == "grpc"
        client = by_id[server["parent_id"]]
        assert (client["service"], client["kind"]) == ("ragmesh-gateway", SPAN_KIND_CLIENT), client
        assert client["attributes"]["rpc.service"] == server["attributes"]["rpc.service"]
        ancestors, parent = [], client["parent_id"]
        while parent in by_id:
            ancestors.append(parent)
            parent = by_id[parent]["parent_id"]
        assert gateway_span["span_id"] in ancestors


def test_abstention_reason_is_on_the_trace(gateway, ingested, otlp):
    trace_id, response = traced_ask(gateway, "what is the parental leave policy")
    assert response.answer.abstained
    spans = wait_for(lambda: [s for s in otlp.trace(trace_id) if s["name"] == "ragmesh.v1.Gateway/Ask"])
    assert spans[0]["attributes"]["ragmesh.answer.abstained"] is True
    assert spans[0]["attributes"]["ragmesh.answer.reason"] == response.answer.reason


def scrape(mesh, stage) -> dict:
    with urllib.request.urlopen(mesh.metrics_url(stage), timeout=5) as reply:
        text = reply.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_every_stage_exports_metrics_that_move_with_traffic(mesh, gateway, ingested):
    before = {stage: scrape(mesh, stage) for stage in STAGES}
    traced_ask(gateway, "whats E-4412")
    after = {stage: scrape(mesh, stage) for stage in STAGES}
    ask = dict(service="ragmesh.v1.Gateway", method="Ask")
    assert (
        value(after["gateway"], "ragmesh_rpc_duration_seconds_count", **ask)
        == value(before["gateway"], "ragmesh_rpc_duration_seconds_count", **ask) + 1
    )
    for stage in ("retrieve", "rerank", "generate"):
        assert value(after["gateway"], "ragmesh_stage_duration_seconds_count", stage=stage) > value(
            before["gateway"], "ragmesh_stage_duration_seconds_count", stage=stage
        )
    assert value(after["retriever"], "ragmesh_retrieval_candidates_count", mode="hybrid") > value(
        before["retriever"], "ragmesh_retrieval_candidates_count", mode="hybrid"
    )
    assert value(after["reranker"], "ragmesh_rerank_batch_size_count") > 0
    assert value(after["indexer"], "ragmesh_index_chunks", backend="embedded") > 0


def test_errors_are_counted_by_code(mesh, gateway):
    import grpc

    before = value(
        scrape(mesh, "gateway"),
        "ragmesh_rpc_errors_total",
        service="ragmesh.v1.Gateway",
        method="Ask",
        code="INVALID_ARGUMENT",
    )
    with pytest.raises(grpc.RpcError):
        gateway.Ask(gateway_pb2.AskRequest(tenant_id="demo", question="  "), timeout=10)  # empty question
    after = value(
        scrape(mesh, "gateway"),
        "ragmesh_rpc_errors_total",
        service="ragmesh.v1.Gateway",
        method="Ask",
        code="INVALID_ARGUMENT",
    )
    assert after == before + 1


def test_ingestion_freshness_gauge_rises_while_documents_wait_and_returns_to_zero(mesh, gateway, tmp_path):
    for i in range(16):
        (tmp_path / f"f{i}.md").write_text(f"# F{i}\n\n" + " ".join(f"Point {j} about topic {i}." for j in range(40)))
    assert value(scrape(mesh, "gateway"), "ragmesh_ingest_oldest_pending_age_seconds") == 0
    lag_before = value(scrape(mesh, "gateway"), "ragmesh_ingest_lag_seconds_count")
    worker = threading.Thread(target=ingest_paths, args=(gateway, "freshness", [str(tmp_path)]))
    worker.start()
    seen = wait_for(
        lambda: value(scrape(mesh, "gateway"), "ragmesh_ingest_oldest_pending_age_seconds") > 0.2, timeout=30
    )
    worker.join(120)
    assert seen, "the oldest-pending age never rose during ingestion"
    after = scrape(mesh, "gateway")
    assert value(after, "ragmesh_ingest_oldest_pending_age_seconds") == 0
    assert value(after, "ragmesh_ingest_lag_seconds_count") == lag_before + 16
