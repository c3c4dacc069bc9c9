"""The answer to a message of several separate questions, made from each question's own (services/gateway/parts.py)."""

from services.gateway.parts import ANSWERED_IN_PART, Answered, joined_answer, joined_response
from shared.stubs import common_pb2


def _scored(chunk_id: str, score: float = 0.9) -> common_pb2.ScoredChunk:
    return common_pb2.ScoredChunk(
        chunk=common_pb2.Chunk(chunk_id=chunk_id), scores=common_pb2.StageScores(rerank_score=score)
    )


def _answered(question: str, text: str, cited: list[str], top: float, coverage: float = 1.0) -> Answered:
    part = Answered(question, [_scored(c, top) for c in [*cited, "ch_shared"]], "maxsim", "", None, "")
    part.top_score = top
    part.context = [_scored(c, top) for c in cited]
    part.answer = common_pb2.Answer(
        text=text,
        citations=[common_pb2.Citation(chunk_id=c) for c in cited],
        reason="answered",
        generator_id="extractive-v1",
        coverage=coverage,
    )
    return part


def _refused(question: str, top: float) -> Answered:
    part = Answered(question, [_scored("ch_near", top)], "maxsim", "", None, "")
    part.top_score = top
    part.suggested = [_scored("ch_near", top)]
    part.answer = common_pb2.Answer(abstained=True, reason="below_threshold", missing="nothing relevant enough")
    return part


def test_each_part_is_quoted_under_its_question_with_citations_numbered_across_the_parts():
    invoices = _answered("how long are invoices kept", "Retention period: 7 years [1]", ["ch_a"], 0.83, 0.9)
    hotels = _answered("hotel cap in london", "The cap is $350 [1]\nTaxes are extra [2]", ["ch_b", "ch_c"], 0.81)
    answer = joined_answer([invoices, hotels])
    assert answer.text == (
        "1. how long are invoices kept\nRetention period: 7 years [1]\n\n"
        "2. hotel cap in london\nThe cap is $350 [2]\nTaxes are extra [3]"
    )
    assert [c.chunk_id for c in answer.citations] == ["ch_a", "ch_b", "ch_c"]
    assert not answer.abstained and answer.reason == "answered" and abs(answer.coverage - 0.9) < 1e-6


def test_a_part_not_found_says_so_and_the_message_abstains_only_when_every_part_does():
    refused = _refused("berlin office address", 0.57)
    answer = joined_answer([_answered("refund window", "14 days [1]", ["ch_a"], 0.84), refused])
    assert not answer.abstained and answer.reason == ANSWERED_IN_PART
    assert answer.text.endswith("2. berlin office address\nNot found in the documents: nothing relevant enough.")
    assert [c.chunk_id for c in answer.citations] == ["ch_a"]
    nothing = joined_answer([refused, _refused("who is our cfo", 0.6)])
    assert nothing.abstained and nothing.reason == "below_threshold" and not nothing.citations
    assert "who is our cfo: nothing relevant enough" in nothing.missing


def test_the_response_holds_each_part_and_the_parts_passages_each_once():
    """The candidates by rank across the parts (each part's first, then each part's second): found by the gate, a
    message parted at "and" listed the second part's gold after the first part's 50 candidates (rank 38-48)."""
    parts = [_answered("refund window", "14 days [1]", ["ch_a"], 0.84), _refused("berlin office address", 0.57)]
    response, candidates = joined_response(parts, threshold=0.80, include_candidates=False)
    assert [p.question for p in response.parts] == ["refund window", "berlin office address"]
    assert [p.answer.abstained for p in response.parts] == [False, True]
    assert response.parts[1].suggested_reading[0].chunk.chunk_id == "ch_near"
    assert abs(response.top_rerank_score - 0.57) < 1e-6  # the weakest part's evidence
    assert [c.chunk.chunk_id for c in candidates] == ["ch_a", "ch_near", "ch_shared"]
    assert not response.candidates and not response.parts[0].candidates  # not asked for
    asked, _ = joined_response(parts, threshold=0.80, include_candidates=True)
    assert [c.chunk.chunk_id for c in asked.candidates] == ["ch_a", "ch_near", "ch_shared"]
    assert [c.chunk.chunk_id for c in asked.parts[0].candidates] == ["ch_a", "ch_shared"]
