"""Feedback on real answers lands in the answer log with its trace; triage and export read it."""

import json
import os
import time

import grpc
import pytest

from services.cli.main import main as ragmesh
from shared.credentials import API_KEY_ENV
from shared.keys import KEYS_FILE, KeyStore
from shared.stubs import gateway_pb2
from tests.support.mesh import TENANT, bearer

pytestmark = pytest.mark.integration


def ask(gateway, question):
    return gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=question), timeout=60)


@pytest.fixture
def cli_env(mesh, monkeypatch):
    """The CLI in this process finds the mesh's local (writer) key for the tenant, as a person's shell would."""
    monkeypatch.delenv(API_KEY_ENV, raising=False)
    monkeypatch.setenv("RAGMESH_DATA_DIR", mesh.data_dir)
    mesh.key_for(TENANT)
    return ["--gateway", mesh.address("gateway")]


def test_feedback_triage_and_export(mesh, gateway, ingested, capsys, tmp_path, cli_env):
    answered = ask(gateway, "how much is the Team plan per month")
    assert answered.answer_id and len(answered.trace_id) == 32
    reply = gateway.Feedback(
        gateway_pb2.FeedbackRequest(
            tenant_id=TENANT,
            answer_id=answered.answer_id,
            rating=gateway_pb2.RATING_THUMBS_DOWN,
            comment="wanted the annual price",
            expected_document_id="pricing/price-list",
            expected_version="2025-Q3",
            expected_evidence="| Team | $79 | $790 | 10 | 1 TB | Email, 1 business day |",
        ),
        timeout=10,
    )
    assert reply.trace_id == answered.trace_id

    missed = ask(gateway, "whats E-4412")
    gateway.Feedback(
        gateway_pb2.FeedbackRequest(
            tenant_id=TENANT,
            answer_id=missed.answer_id,
            rating=gateway_pb2.RATING_THUMBS_DOWN,
            expected_document_id="contracts/not-ingested",
        ),
        timeout=10,
    )

    assert ragmesh(["triage", *cli_env]) == 0
    out = capsys.readouterr().out
    poor = out.split("== poor answer")[1].split("==")[0]
    never = out.split("== never retrieved")[1].split("==")[0]
    assert answered.answer_id[:12] in poor and missed.answer_id[:12] in never

    path = tmp_path / "cases.jsonl"
    assert ragmesh(["feedback", "export", "--out", str(path), *cli_env]) == 0
    cases = [json.loads(line) for line in path.read_text().splitlines()]
    exported = [c for c in cases if c["question"] == "how much is the Team plan per month"]
    assert exported and exported[0]["gold"][0]["doc_id"] == "pricing/price-list"
    assert os.path.exists(os.path.join(mesh.data_dir, "answers.sqlite"))


def test_feedback_on_an_unknown_answer_is_not_found(gateway):
    with pytest.raises(grpc.RpcError) as err:
        gateway.Feedback(
            gateway_pb2.FeedbackRequest(tenant_id=TENANT, answer_id="nope", rating=gateway_pb2.RATING_THUMBS_UP),
            timeout=10,
        )
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


def _feedback_down(gateway, question: str, **expected) -> gateway_pb2.AskResponse:
    answered = ask(gateway, question)
    gateway.Feedback(
        gateway_pb2.FeedbackRequest(
            tenant_id=TENANT, answer_id=answered.answer_id, rating=gateway_pb2.RATING_THUMBS_DOWN, **expected
        ),
        timeout=10,
    )
    return answered


def test_list_feedback_carries_each_entrys_pile_and_case(gateway, ingested):
    since = time.time()
    answered = _feedback_down(
        gateway,
        "how much is the Team plan per month",
        comment="wanted the annual price",
        expected_document_id="pricing/price-list",
        expected_version="2025-Q3",
        expected_evidence="| Team | $79 | $790 | 10 | 1 TB | Email, 1 business day |",
    )
    listed = gateway.ListFeedback(
        gateway_pb2.ListFeedbackRequest(tenant_id=TENANT, since=since, rating=gateway_pb2.RATING_THUMBS_DOWN),
        timeout=10,
    )
    (entry,) = [e for e in listed.entries if e.answer_id == answered.answer_id]
    assert (entry.trace_id, entry.question) == (answered.trace_id, "how much is the Team plan per month")
    assert entry.comment == "wanted the annual price" and entry.created_at >= since
    assert entry.triage_pile == "poor_answer"  # it cited the expected document
    case = json.loads(entry.eval_case_json)
    assert case["gold"][0]["doc_id"] == "pricing/price-list" and case["tenant"] == TENANT
    # A rating filter keeps that rating only; a later `since` keeps nothing older.
    up = gateway.ListFeedback(gateway_pb2.ListFeedbackRequest(rating=gateway_pb2.RATING_THUMBS_UP), timeout=10)
    assert all(e.rating == gateway_pb2.RATING_THUMBS_UP for e in up.entries)
    later = gateway.ListFeedback(gateway_pb2.ListFeedbackRequest(since=time.time() + 60), timeout=10)
    assert list(later.entries) == []


def test_feedback_is_listed_a_page_at_a_time(gateway, ingested):
    """Pages in (created_at, feedback_id) order: together every entry of the whole listing once, in its order."""
    for question in ("how much is the Team plan per month", "what is the refund window", "uk payment methods"):
        _feedback_down(gateway, question, comment="paging")
    whole = gateway.ListFeedback(gateway_pb2.ListFeedbackRequest(tenant_id=TENANT), timeout=10)
    assert not whole.next_page_token and len(whole.entries) >= 3
    paged, request = [], gateway_pb2.ListFeedbackRequest(tenant_id=TENANT, page_size=2)
    while True:
        page = gateway.ListFeedback(request, timeout=10)
        assert len(page.entries) <= 2
        paged += [e.feedback_id for e in page.entries]
        if not page.next_page_token:
            break
        request.page_token = page.next_page_token
    assert paged == [e.feedback_id for e in whole.entries]
    for field, bad in (("page_size", {"page_size": -1}), ("page_token", {"page_token": "not-a-token"})):
        with pytest.raises(grpc.RpcError) as err:
            gateway.ListFeedback(gateway_pb2.ListFeedbackRequest(tenant_id=TENANT, **bad), timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and field in err.value.details()
    # A ListDocuments token is not a ListFeedback one.
    documents = gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=TENANT, page_size=1), timeout=10)
    with pytest.raises(grpc.RpcError) as err:
        gateway.ListFeedback(
            gateway_pb2.ListFeedbackRequest(tenant_id=TENANT, page_token=documents.next_page_token), timeout=10
        )
    assert "not one a ListFeedback page returned" in err.value.details()


def test_feedback_review_needs_a_writer_key_of_the_tenant(mesh, gateway, raw, ingested):
    _feedback_down(gateway, "what is the parental leave policy", should_abstain=True)
    keys = KeyStore(os.path.join(mesh.data_dir, KEYS_FILE))
    _, reader = keys.create(TENANT, ["*"], "reader")
    _, stranger = keys.create("review-stranger", ["*"], "writer")
    record = gateway_pb2.RecordFeedbackExportRequest(tenant_id=TENANT, path="/tmp/cases.jsonl", feedback_ids=["x"])
    for call in (
        lambda: raw.ListFeedback(gateway_pb2.ListFeedbackRequest(), metadata=bearer(reader), timeout=10),
        lambda: raw.RecordFeedbackExport(record, metadata=bearer(reader), timeout=10),
    ):
        with pytest.raises(grpc.RpcError) as err:
            call()
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED and "needs writer" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        raw.ListFeedback(gateway_pb2.ListFeedbackRequest(tenant_id=TENANT), metadata=bearer(stranger), timeout=10)
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED and "not 'demo'" in err.value.details()
    # The key's own tenant: none of the other tenant's feedback.
    own = raw.ListFeedback(gateway_pb2.ListFeedbackRequest(), metadata=bearer(stranger), timeout=10)
    assert list(own.entries) == []
    mine = gateway.ListFeedback(gateway_pb2.ListFeedbackRequest(), timeout=10)
    assert any(e.should_abstain for e in mine.entries)


def test_record_feedback_export_names_the_bad_field(gateway, ingested):
    answered = _feedback_down(gateway, "whats E-4412", expected_document_id="contracts/not-ingested")
    (entry,) = [
        e
        for e in gateway.ListFeedback(gateway_pb2.ListFeedbackRequest(), timeout=10).entries
        if e.answer_id == answered.answer_id
    ]
    cases = [
        (gateway_pb2.RecordFeedbackExportRequest(path="cases.jsonl", feedback_ids=[entry.feedback_id]), "path"),
        (gateway_pb2.RecordFeedbackExportRequest(path="/tmp/c.jsonl", feedback_ids=["nope"]), "feedback_ids"),
        # No evidence named: this feedback makes no case, so no export can hold one.
        (
            gateway_pb2.RecordFeedbackExportRequest(path="/tmp/c.jsonl", feedback_ids=[entry.feedback_id]),
            "no evaluation case",
        ),
    ]
    for request, named in cases:
        with pytest.raises(grpc.RpcError) as err:
            gateway.RecordFeedbackExport(request, timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and named in err.value.details()


def test_feedback_on_a_scoped_answer_is_reviewed_only_by_keys_holding_its_scopes(mesh, raw, ingested):
    """A writer holding only `support` was shown the question and evidence quote of feedback on an Ask made with
    `hr-confidential`; now review (ListFeedback, export) shows an entry only to keys holding the Ask's scopes."""
    keys = KeyStore(os.path.join(mesh.data_dir, KEYS_FILE))
    _, hr = keys.create(TENANT, ["hr-confidential"], "writer")
    _, support = keys.create(TENANT, ["support"], "writer")

    def feedback_on(token, question, scopes) -> str:
        asked = raw.Ask(
            gateway_pb2.AskRequest(question=question, filters={"access_scopes": scopes}),
            metadata=bearer(token),
            timeout=60,
        )
        down = gateway_pb2.FeedbackRequest(
            answer_id=asked.answer_id,
            rating=gateway_pb2.RATING_THUMBS_DOWN,
            expected_document_id="handbook/salary-bands",
            expected_evidence="Engineering bands",
        )
        raw.Feedback(down, metadata=bearer(token), timeout=10)
        return asked.answer_id

    def listed(token) -> dict[str, str]:
        reply = raw.ListFeedback(gateway_pb2.ListFeedbackRequest(), metadata=bearer(token), timeout=10)
        return {e.answer_id: e.feedback_id for e in reply.entries}

    confidential = feedback_on(hr, "engineering salary bands", ["hr-confidential"])
    public = feedback_on(support, "how much is the Team plan per month", [])
    assert {confidential, public} <= set(listed(hr))
    assert public in listed(support) and confidential not in listed(support)
    record = gateway_pb2.RecordFeedbackExportRequest(path="/tmp/cases.jsonl", feedback_ids=[listed(hr)[confidential]])
    with pytest.raises(grpc.RpcError) as err:
        raw.RecordFeedbackExport(record, metadata=bearer(support), timeout=10)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "not in the answer log" in err.value.details()
