"""Request bounds are INVALID_ARGUMENT naming the field and the limit, before any stage is called."""

import pytest

from services.gateway.funnel import Funnel
from services.gateway.limits import RequestLimits
from services.gateway.server import GatewayServicer
from shared.errors import InvalidArgument
from shared.stubs import gateway_pb2

FIVE_QUESTIONS = "1) vpn rules 2) hotel cap nyc 3) refund window 4) parental leave 5) p1 ack"
NOWHERE = {stage: "127.0.0.1:9" for stage in ("chunker", "indexer", "retriever", "reranker", "generator")}


@pytest.fixture(scope="module")
def servicer():
    return GatewayServicer(Funnel(NOWHERE, 0.35, request_limits=RequestLimits(100, 50, 200)), max_documents=2)


@pytest.mark.parametrize(
    "call, field, limit",
    [
        (lambda s: s.Search(gateway_pb2.SearchRequest(tenant_id="t", query="q", top_k=51), None), "top_k", "50"),
        (lambda s: s.Search(gateway_pb2.SearchRequest(tenant_id="t", query="q", top_k=-1), None), "top_k", "50"),
        (lambda s: s.Search(gateway_pb2.SearchRequest(tenant_id="t", query="q" * 101), None), "query", "100"),
        (lambda s: s.Ask(gateway_pb2.AskRequest(tenant_id="t", question="q" * 101), None), "question", "100"),
        # Each separate question of a message runs the whole funnel (shared/questions.py).
        (
            lambda s: s.Ask(gateway_pb2.AskRequest(tenant_id="t", question=FIVE_QUESTIONS), None),
            "question",
            "asks 5 separate questions, over the limit of 4",
        ),
        (
            lambda s: s.Feedback(
                gateway_pb2.FeedbackRequest(tenant_id="t", answer_id="a", rating=1, comment="c" * 201), None
            ),
            "comment",
            "200",
        ),
        (
            lambda s: s.Feedback(
                gateway_pb2.FeedbackRequest(tenant_id="t", answer_id="a", rating=1, expected_evidence="e" * 201), None
            ),
            "expected_evidence",
            "200",
        ),
        (
            lambda s: list(s.Ingest(gateway_pb2.IngestRequest(tenant_id="t", documents=[{}, {}, {}]), None)),
            "documents",
            "2",
        ),
    ],
)
def test_each_limit_names_its_field_and_value(servicer, call, field, limit):
    with pytest.raises(InvalidArgument) as err:
        call(servicer)
    assert err.value.field == field and limit in err.value.message
