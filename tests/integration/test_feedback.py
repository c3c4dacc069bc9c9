"""Feedback on real answers lands in the answer log with its trace; triage and export read it."""

import json
import os

import grpc
import pytest

from services.cli.main import main as ragmesh
from shared.stubs import gateway_pb2
from tests.integration.conftest import TENANT

pytestmark = pytest.mark.integration


def ask(gateway, question):
    return gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=question), timeout=60)


def test_feedback_triage_and_export(mesh, gateway, ingested, capsys, tmp_path):
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

    assert ragmesh(["triage", "--data-dir", mesh.data_dir]) == 0
    out = capsys.readouterr().out
    generation = out.split("== generation failure")[1].split("==")[0]
    never = out.split("== never retrieved")[1].split("==")[0]
    assert answered.answer_id[:12] in generation and missed.answer_id[:12] in never

    path = tmp_path / "cases.jsonl"
    assert ragmesh(["feedback", "export", "--data-dir", mesh.data_dir, "--out", str(path)]) == 0
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
