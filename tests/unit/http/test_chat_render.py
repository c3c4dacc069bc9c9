from ragmesh.v1 import common_pb2, gateway_pb2
from services.http.openai_compat import render


def _reading(title: str, path: list[str]) -> common_pb2.ScoredChunk:
    meta = common_pb2.DocumentMeta(document_id="pricing/discounts", version="2025", title=title)
    return common_pb2.ScoredChunk(chunk=common_pb2.Chunk(chunk_id="c1", meta=meta, heading_path=path))


def test_suggested_reading_names_a_passage_as_its_citation_would():
    """Title, then section path, as Sources name a citation: a section under a plain-text heading was named by
    its path alone ("1. ANNUAL PREPAY"), a cited one by title and path."""
    reply = gateway_pb2.AskResponse(
        answer=common_pb2.Answer(abstained=True, missing="the passages do not mention: parental"),
        suggested_reading=[
            _reading("Discount Programs", ["1. ANNUAL PREPAY"]),
            _reading("Discount Programs", []),
            _reading("Refund Policy", ["Refund Policy", "Annual plans"]),
        ],
    )
    lines = render(reply).splitlines()
    assert lines[-3:] == [
        "- pricing/discounts@2025: Discount Programs > 1. ANNUAL PREPAY",
        "- pricing/discounts@2025: Discount Programs",
        "- pricing/discounts@2025: Refund Policy > Annual plans",
    ]


def test_a_message_answered_in_part_names_what_to_read_for_the_questions_not_found():
    reply = gateway_pb2.AskResponse(
        answer=common_pb2.Answer(text="1. refunds\nPaid within 14 days. [1]\n\n2. parental leave\nNot found."),
        suggested_reading=[_reading("Discount Programs", ["1. ANNUAL PREPAY"])],
    )
    lines = render(reply).splitlines()
    assert lines[-3:] == [
        "",
        "Suggested reading for the questions not found:",
        "- pricing/discounts@2025: Discount Programs > 1. ANNUAL PREPAY",
    ]
    assert "Suggested" not in render(gateway_pb2.AskResponse(answer=common_pb2.Answer(text="x [1]")))
