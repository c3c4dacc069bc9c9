"""Tenant ids are bounded before any stage is called: a 20 MB tenant name never reaches the answer log."""

import pytest

from services.gateway.funnel import Funnel
from services.gateway.server import GatewayServicer
from shared.errors import InvalidArgument
from shared.stubs import gateway_pb2, indexer_pb2, retriever_pb2

NOWHERE = {stage: "127.0.0.1:9" for stage in ("chunker", "indexer", "retriever", "reranker", "generator")}
BAD = ["x" * 65, "x" * 2_000_000, "acme corp", "../acme", "-acme", "acme\n", "ácme"]


@pytest.fixture(scope="module")
def servicer():
    return GatewayServicer(Funnel(NOWHERE, 0.35), max_documents=10)


@pytest.mark.parametrize("tenant", BAD, ids=lambda t: repr(t[:12]))
def test_bad_tenant_ids_are_invalid_argument_on_every_method(servicer, tenant):
    calls = [
        lambda: servicer.Search(gateway_pb2.SearchRequest(tenant_id=tenant, query="q"), None),
        lambda: servicer.Ask(gateway_pb2.AskRequest(tenant_id=tenant, question="q"), None),
        lambda: servicer.GetChunk(retriever_pb2.GetChunkRequest(tenant_id=tenant, chunk_id="c"), None),
        lambda: servicer.DeleteDocument(indexer_pb2.DeleteDocumentRequest(tenant_id=tenant, document_id="d"), None),
        lambda: servicer.Feedback(gateway_pb2.FeedbackRequest(tenant_id=tenant, answer_id="a", rating=1), None),
        lambda: list(servicer.Ingest(gateway_pb2.IngestRequest(tenant_id=tenant), None)),
    ]
    for call in calls:
        with pytest.raises(InvalidArgument) as err:
            call()
        assert err.value.field == "tenant_id" and len(err.value.message) < 300


def test_good_tenant_ids_pass_the_check(servicer):
    with pytest.raises(InvalidArgument, match="answer_id"):  # got past the tenant check
        servicer.Feedback(gateway_pb2.FeedbackRequest(tenant_id="acme-1.eu_west", answer_id=""), None)
