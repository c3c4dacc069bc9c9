from services.gateway.context import context_for
from shared.model import ScoredChunk, StageScores
from tests.conformance.index_suite import chunk, meta


def passage(heading: str, body: str) -> ScoredChunk:
    c = chunk(meta(doc="manuals/error-codes"), 0, body)
    c.heading_path = ["Error Code Reference", heading]
    return ScoredChunk(c, StageScores())


NOTE = passage("New features", "E-4421 and E-4422 are now separate codes.")
E4422 = passage("E-4422 Sync quota throttled", "Meaning: the client exceeded 10,000 changes per hour.")
OTHERS = [passage(f"E-{n} Other", "Meaning: something else.") for n in (2410, 5110, 1011, 3050)]
E4421 = passage("E-4421 Sync token invalid", "Meaning: the cursor token is no longer accepted.")
RANKED = [NOTE, E4422, *OTHERS, E4421]


def test_a_comparison_side_no_top_passage_names_brings_its_own_passage():
    context = context_for("E-4421 vs E-4422", RANKED, 5)
    assert len(context) == 5
    assert E4421 in context and NOTE in context and E4422 in context
    # It takes the place of the lowest-ranked passage about neither side.
    assert context[4] is E4421 and context[:4] == RANKED[:4]


def test_any_other_question_reads_the_top_passages():
    assert context_for("E-4421 how to fix", RANKED, 5) == RANKED[:5]
    # Sides that differ by no word of their own, sides each with a passage about it among the top, and a side no
    # passage is about, change nothing.
    assert context_for("E-4422 vs E-4422", RANKED, 5) == RANKED[:5]
    assert context_for("E-4422 vs E-2410", RANKED, 5) == RANKED[:5]
    assert context_for("E-4422 vs E-9999", RANKED, 5) == RANKED[:5]


def _scored(heading: str, rerank_score: float) -> ScoredChunk:
    p = passage(heading, f"{heading}.")
    p.scores.rerank_score = rerank_score
    return p


def test_the_passage_whose_score_lets_the_answer_through_is_read():
    """Found by use: 'what is customer data' was let through on the MSA definitions' 0.858, which a reranker fused
    with the first stage had ranked sixth, and answered from the five above it (a breach notice's sentence)."""
    ranked = [_scored(f"P{i}", score) for i, score in enumerate((0.66, 0.68, 0.76, 0.63, 0.61, 0.86, 0.63, 0.62, 0.9))]
    context = context_for("what is customer data", ranked, 5, scored=8)
    # It takes the last place; the four above keep theirs. The ninth passage is past what the decision reads.
    assert context == [*ranked[:4], ranked[5]]
    # The best already among the five, or no scores read: the first five as they are.
    assert context_for("what is customer data", ranked[1:], 5, scored=3) == ranked[1:6]
    assert context_for("what is customer data", ranked, 5) == ranked[:5]
