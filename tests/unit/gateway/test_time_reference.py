"""The past time a question names (services/gateway/time_reference.py): what it reads and what it leaves alone."""

from datetime import UTC, datetime

import pytest

from services.gateway.time_reference import applies, keep_former, time_reference, with_reference
from shared.stubs import common_pb2

NOW = datetime(2026, 12, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    ("question", "as_of"),
    [
        ("in 2025 could customers request refunds by email", "2025-12-31T23:59:59Z"),
        ("2025 refund rules - fee for business refund by wire", "2025-12-31T23:59:59Z"),
        ("last year how long did refunds take", "2025-12-31T23:59:59Z"),
        ("travel policy back in 2019", "2019-12-31T23:59:59Z"),
    ],
)
def test_a_past_year_searches_the_versions_in_force_at_its_end(question, as_of):
    reference = time_reference(question, NOW)
    assert reference is not None
    assert (reference.as_of, reference.include_superseded, reference.former_only) == (as_of, False, False)


@pytest.mark.parametrize(
    "question",
    [
        "tier 1 refund limit under the previous policy",
        "old policy: refund after 30 days",
        "what did the former SLA say",
    ],
)
def test_old_or_previous_without_a_year_keeps_the_superseded_versions(question):
    reference = time_reference(question, NOW)
    assert reference is not None and reference.include_superseded and reference.former_only and not reference.as_of


@pytest.mark.parametrize(
    "question",
    ["consumer refund window old vs new policy", "$400 refund who approves now vs in 2025", "what changed since 2024"],
)
def test_then_and_now_together_let_every_version_compete(question):
    reference = time_reference(question, NOW)
    assert reference is not None and reference.include_superseded and not reference.former_only and not reference.as_of


@pytest.mark.parametrize(
    "question",
    [
        "who approves a $3000 refund",
        "can i pass 7d to jobs cancel --older-than",  # a flag's name, not the past
        "enterprise plan price 2026",  # this year is the present
        "what changed in 2.1.2",  # a version number
        "expense limit $2025",  # an amount
        "E-2025 meaning",  # an identifier
        "is 2030 the sunset date",  # the future
    ],
)
def test_a_question_about_the_present_is_left_alone(question):
    assert time_reference(question, NOW) is None


def test_a_request_that_names_a_time_itself_is_not_second_guessed():
    assert applies(common_pb2.SearchFilters(access_scopes=["public"]))
    assert not applies(common_pb2.SearchFilters(as_of="2025-06-01"))
    assert not applies(common_pb2.SearchFilters(include_superseded=True))


def test_the_reference_widens_a_copy_of_the_filters():
    filters = common_pb2.SearchFilters(access_scopes=["internal"], document_ids=["handbook/refund-policy"])
    reference = time_reference("in 2025 who approved refunds", NOW)
    assert reference is not None
    widened = with_reference(filters, reference)
    assert (widened.as_of, list(widened.access_scopes), list(widened.document_ids)) == (
        "2025-12-31T23:59:59Z",
        ["internal"],
        ["handbook/refund-policy"],
    )
    assert filters.as_of == ""  # the caller's message is untouched


def _candidate(document_id: str, version: str, effective_to: str = "") -> common_pb2.ScoredChunk:
    meta = common_pb2.DocumentMeta(document_id=document_id, version=version, effective_to=effective_to)
    return common_pb2.ScoredChunk(chunk=common_pb2.Chunk(chunk_id=f"{document_id}@{version}", meta=meta))


def test_keep_former_drops_only_the_current_versions_of_documents_that_have_a_superseded_one():
    candidates = [
        _candidate("handbook/refund-policy", "2026"),
        _candidate("handbook/refund-policy", "2025", effective_to="2026-01-01T00:00:00Z"),
        _candidate("pricing/price-list", "2025-Q3"),  # one version: the question may draw on it too
        _candidate("handbook/travel", "3", effective_to="2027-01-01T00:00:00Z"),  # ends later: still in force
    ]
    kept = keep_former(candidates, "2026-12-02T00:00:00Z")
    assert [c.chunk.chunk_id for c in kept] == [
        "handbook/refund-policy@2025",
        "pricing/price-list@2025-Q3",
        "handbook/travel@3",
    ]


def test_the_description_can_leave_the_questions_words_out():
    reference = time_reference("tier 1 refund limit under the previous policy", NOW)
    assert reference is not None
    assert reference.describe() == "superseded versions first (the question says 'previous')"
    assert reference.describe(quote_question=False) == "superseded versions first"


def test_old_as_an_age_is_not_the_past():
    """Found by use: "we signed up for business last month and our invoice is 10 days old. can we get a refund?" was
    searched "superseded versions first (the question says 'old')" and answered from the 2025 refund policy's 30
    days, not the policy in force."""
    for question in (
        "we signed up for business last month and our invoice is 10 days old. can we get a refund?",
        "my renewal is 15 days old, refund?",
        "how old can a refund request be",
        "delete files older than 30 days",
        "refund for a two-week old annual plan",
    ):
        assert time_reference(question, NOW) is None, question
    # The past, as before: the old policy, an old window, an age beside it.
    assert time_reference("under the old policy who approved refunds", NOW).former_only
    assert time_reference("the old 14 day window", NOW).former_only
    assert time_reference("my invoice is 10 days old, what was the old refund window", NOW).former_only
