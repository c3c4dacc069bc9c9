"""A thumbs-down answer is filed under the stage that failed, judged by the document the reviewer expected."""

import json

import pytest

from services.gateway.answer_log import triage_pile
from services.gateway.policy import BELOW_THRESHOLD

CANDIDATES = [
    {"chunk_id": "c-other", "document_id": "pricing/discounts", "version": "1"},
    {"chunk_id": "c-gold", "document_id": "pricing/price-list", "version": "2025-Q3"},
    {"chunk_id": "c-low", "document_id": "manuals/cli", "version": "1"},
]


def _row(context=("c-other", "c-gold"), cited=(), abstained=False, reason="", expected="pricing/price-list", **kw):
    return {
        "should_abstain": kw.get("should_abstain", False),
        "expected_document_id": expected,
        "expected_version": kw.get("expected_version", ""),
        "candidates": json.dumps(CANDIDATES),
        "context_ids": json.dumps(list(context)),
        "cited_ids": json.dumps(list(cited)),
        "abstained": abstained,
        "reason": reason,
    }


@pytest.mark.parametrize(
    ("row", "pile"),
    [
        (_row(expected="handbook/absent"), "never_retrieved"),
        (_row(expected="pricing/price-list", expected_version="2024"), "never_retrieved"),
        (_row(expected="manuals/cli"), "ranked_low"),
        (_row(abstained=True, reason=f"{BELOW_THRESHOLD}: 0.61 < 0.80"), "gate_abstained"),
        (_row(abstained=True, reason="no_supporting_sentence"), "generator_abstained"),
        (_row(cited=("c-other",)), "wrong_citation"),
        (_row(cited=("c-gold",)), "poor_answer"),
        (_row(expected=""), "unattributed"),
        (_row(should_abstain=True, cited=("c-gold",)), "answered_when_it_should_abstain"),
        (_row(should_abstain=True, abstained=True), "ok"),
    ],
)
def test_each_failure_lands_in_its_pile(row, pile):
    assert triage_pile(row) == pile
