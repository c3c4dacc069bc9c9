from services.gateway.policy import invalid_citations, should_abstain, supported
from shared.calibration import AnswerDecision
from shared.model import Answer
from shared.stubs import common_pb2


def test_abstains_below_a_calibrated_threshold_only():
    one_level = AnswerDecision(0.35)
    assert should_abstain(0.2, one_level, True).reason == "below_threshold"
    assert not should_abstain(0.5, one_level, True).abstain
    # Fused-order scores (passthrough / degraded) carry no calibrated meaning.
    assert not should_abstain(0.01, one_level, False).abstain
    assert should_abstain(None, one_level, True).reason == "no_candidates"


BODY = "Refunds are paid within 14 days."


def chunk(cid="c1", start=100):
    return common_pb2.Chunk(
        chunk_id=cid,
        meta=common_pb2.DocumentMeta(document_id="d", version="2"),
        body=BODY,
        char_start=start,
        char_end=start + len(BODY),
    )


def cite(cid="c1", start=100, end=132, quote=BODY, doc="d", version="2"):
    return common_pb2.Citation(
        chunk_id=cid, char_start=start, char_end=end, quote=quote, document_id=doc, version=version
    )


def test_citations_are_checked_down_to_the_character():
    context = {"c1": chunk(), "c2": chunk("c2", 500)}
    assert invalid_citations([cite(), cite("c2", 500, 532, BODY)], context) == ""
    assert invalid_citations([], context) == "answer has no citation"
    assert "c9" in invalid_citations([cite(), cite("c9")], context)
    assert invalid_citations([cite(doc="other")], context).startswith("wrong document:")
    assert invalid_citations([cite(version="1")], context).startswith("wrong document:")
    assert invalid_citations([cite(start=90, end=107, quote="Refunds")], context).startswith("span outside the chunk:")
    assert invalid_citations([cite(end=140, quote=BODY + "!!!!!!")], context).startswith("span outside")
    # The right span with words the source does not have there: a paraphrase passed off as a quote.
    assert invalid_citations([cite(quote="Rebates")], context).startswith("quote differs from the source:")


def test_a_cited_span_must_be_an_answer_unit_of_a_supplied_passage():
    body = "Refunds are paid within 14 days. Fees are not refunded.\n\n- Card payments\n- Bank transfer"
    c = common_pb2.Chunk(
        chunk_id="c1", meta=common_pb2.DocumentMeta(document_id="d", version="2"), body=body, char_start=100
    )
    c.char_end = 100 + len(body)

    def at(text: str) -> common_pb2.Citation:
        start = 100 + body.index(text)
        return cite(start=start, end=start + len(text), quote=text)

    context = {"c1": c}
    assert invalid_citations([at("Fees are not refunded."), at("- Bank transfer")], context) == ""
    # The source's exact words at their exact place, but not a unit the generator read: half a sentence, or
    # two units run together.
    for span in ("paid within 14 days", "Refunds are paid within 14 days. Fees are not refunded."):
        assert invalid_citations([at(span)], context).startswith("span not a supplied unit:"), span


def test_the_second_level_generates_from_its_threshold_and_answers_with_enough_coverage():
    decision = AnswerDecision(threshold=0.80, support_threshold=0.71, min_coverage=0.8)
    band, below, above = (should_abstain(score, decision, True) for score in (0.75, 0.70, 0.85))
    assert not band.abstain and band.needs_support
    assert below.abstain and below.reason == "below_threshold" and not below.needs_support
    assert not above.abstain and not above.needs_support
    assert supported(Answer("x [1]", [], False, coverage=0.8), 0.75, decision)
    assert not supported(Answer("x [1]", [], False, coverage=0.75), 0.75, decision)
    assert not supported(Answer("", [], True, coverage=1.0), 0.75, decision)  # an abstention is never an answer
    assert supported(Answer("x [1]", [], False, coverage=0.0), 0.85, decision)  # above the threshold: any coverage
    # Without a second level nothing below the threshold is generated.
    assert should_abstain(0.75, AnswerDecision(0.80), True).abstain
