"""Tenant and scope isolation through the real gateway, as a property (hypothesis), on both index backends.

Random tenants (some with a single chunk, some sharing text with another tenant), random scopes per
document and per key; queries made of the other tenants' distinctive tokens go through Search, Ask
(answer, citations, context, suggested reading), GetChunk with foreign chunk ids, Feedback on foreign
answer ids, and the answer log that triage and export read. Nothing foreign may appear anywhere.
"""

import json
import os
import uuid

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opensearchpy import OpenSearch

from services.cli.mesh import Mesh
from services.gateway.answer_log import feedback_to_case
from shared.keys import KEYS_FILE, KeyStore
from shared.stubs import gateway_pb2, gateway_pb2_grpc, retriever_pb2
from tests.support.mesh import answer_log, ingest_paths

pytestmark = pytest.mark.integration
SCOPES = ("public", "hr", "finance")
SHARED = "Refunds for annual plans are paid within ten business days."
TALLY = {"cases": 0, "calls": 0, "leaks": 0}
OPENSEARCH_URL = os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200")


@st.composite
def worlds(draw):
    run = uuid.uuid4().hex[:6]
    world = {}
    for t in range(draw(st.integers(2, 3))):
        tenant = f"iso{run}t{t}"
        docs = []
        for d in range(draw(st.integers(1, 2))):
            token = f"zq{run}t{t}d{d}"
            scopes = draw(st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True))
            shared = SHARED if draw(st.booleans()) else ""
            body = f"# {token} guide\n\nThe {token} value is {t}{d}. {shared}\n"
            docs.append((f"{tenant}/doc-{d}", token, scopes, body))
        world[tenant] = docs
    held = draw(st.lists(st.sampled_from(SCOPES[1:]), max_size=2, unique=True))
    return world, held


@pytest.fixture(scope="module", params=["embedded", "opensearch"])
def backend(request, tmp_path_factory):
    """The session mesh (embedded index) or a mesh of its own on OpenSearch, with its gateway and key store."""
    if request.param == "embedded":
        mesh = request.getfixturevalue("mesh")
        yield mesh, request.getfixturevalue("gateway"), KeyStore(os.path.join(mesh.data_dir, KEYS_FILE))
        return
    prefix = f"ragmesh-iso-{uuid.uuid4().hex[:8]}"
    env = {"RAGMESH_INDEX": "opensearch", "RAGMESH_OPENSEARCH_PREFIX": prefix}
    mesh = Mesh.on_free_ports(str(tmp_path_factory.mktemp("iso-opensearch")), extra_env=env)
    mesh.start(timeout=240)
    channel = mesh.gateway_channel()
    try:
        yield mesh, gateway_pb2_grpc.GatewayStub(channel), KeyStore(os.path.join(mesh.data_dir, KEYS_FILE))
    finally:
        channel.close()
        mesh.stop()
        OpenSearch(hosts=[OPENSEARCH_URL]).indices.delete(index=f"{prefix}-*", ignore_unavailable=True)


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(case=worlds())
def test_nothing_foreign_reaches_a_tenant(backend, tmp_path_factory, case):
    mesh, gateway, keys = backend
    world, held = case
    for tenant, docs in world.items():
        folder = tmp_path_factory.mktemp(tenant)
        for doc_id, _, scopes, body in docs:
            (folder / f"{doc_id.split('/')[-1]}.md").write_text(
                f"---\ndoc_id: {doc_id}\naccess_scopes: [{', '.join(scopes)}]\n---\n{body}"
            )
        assert all(r.ok for r in ingest_paths(gateway, tenant, [str(folder)]))

    answers, chunk_ids = {}, {}
    with grpc.insecure_channel(mesh.address("gateway")) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        for tenant in world:
            _, token = keys.create(tenant, held, "reader")
            auth = (("authorization", f"Bearer {token}"),)
            foreign = [t for other, docs in world.items() if other != tenant for _, t, _, _ in docs]
            query = " ".join(foreign) + " " + SHARED
            filters = {"access_scopes": held}
            found = stub.Search(
                gateway_pb2.SearchRequest(query=query, top_k=20, filters=filters), metadata=auth, timeout=60
            )
            asked = stub.Ask(
                gateway_pb2.AskRequest(
                    question=f"what is the {foreign[0]} value", filters=filters, include_candidates=True
                ),
                metadata=auth,
                timeout=120,
            )
            answers[tenant] = asked.answer_id
            seen = [*found.results, *asked.context, *asked.suggested_reading, *asked.candidates]
            chunk_ids[tenant] = {s.chunk.chunk_id for s in seen}
            texts = [s.chunk.body for s in seen] + [s.chunk.section_text for s in seen] + [asked.answer.text]
            texts += [c.quote for c in asked.answer.citations]
            TALLY["calls"] += 2
            TALLY["leaks"] += sum(
                s.chunk.meta.tenant_id != tenant or not set(s.chunk.meta.access_scopes) & {"public", *held}
                for s in seen
            )
            TALLY["leaks"] += sum(not c.document_id.startswith(tenant + "/") for c in asked.answer.citations)
            TALLY["leaks"] += sum(tok in text for tok in foreign for text in texts)

        for tenant, answer_id in answers.items():
            _, token = keys.create(tenant, list(SCOPES[1:]), "reader")
            auth = (("authorization", f"Bearer {token}"),)
            for other, ids in chunk_ids.items():
                for chunk_id in ids if other != tenant else ():
                    TALLY["calls"] += 1
                    try:
                        stub.GetChunk(
                            retriever_pb2.GetChunkRequest(chunk_id=chunk_id, access_scopes=list(SCOPES[1:])),
                            metadata=auth,
                            timeout=30,
                        )
                        TALLY["leaks"] += 1
                    except grpc.RpcError as err:
                        assert err.code() == grpc.StatusCode.NOT_FOUND
            for other, other_answer in answers.items():
                if other != tenant:
                    TALLY["calls"] += 1
                    try:
                        stub.Feedback(
                            gateway_pb2.FeedbackRequest(answer_id=other_answer, rating=gateway_pb2.RATING_THUMBS_DOWN),
                            metadata=auth,
                            timeout=30,
                        )
                        TALLY["leaks"] += 1
                    except grpc.RpcError as err:
                        assert err.code() == grpc.StatusCode.NOT_FOUND
            stub.Feedback(
                gateway_pb2.FeedbackRequest(
                    answer_id=answer_id, rating=gateway_pb2.RATING_THUMBS_DOWN, should_abstain=True
                ),
                metadata=auth,
                timeout=30,
            )

    # What triage and export read: each tenant's answers hold only its own candidates and context.
    for row in answer_log(mesh.data_dir).feedback_rows():
        tenant = row["tenant_id"]
        if tenant not in world:
            continue
        candidates = json.loads(row["candidates"])
        TALLY["leaks"] += sum(not c["document_id"].startswith(tenant + "/") for c in candidates)
        case = feedback_to_case(row)
        TALLY["leaks"] += case is not None and case["tenant"] != tenant
    TALLY["cases"] += 1
    print(
        f"isolation through the gateway: {TALLY['cases']} generated cases, {TALLY['calls']} calls, "
        f"{TALLY['leaks']} leaks"
    )
    assert TALLY["leaks"] == 0
