"""The gateway's decisions, kept free of gRPC so they can be tested alone."""

import dataclasses

from shared.calibration import AnswerDecision
from shared.text import answer_units


@dataclasses.dataclass(frozen=True)
class AbstainDecision:
    abstain: bool
    reason: str
    # Below the threshold but within the answer decision's second level: generate, and give the answer only when
    # it covers enough of the question (AnswerDecision.answers).
    needs_support: bool = False


NO_CANDIDATES, BELOW_THRESHOLD = "no_candidates", "below_threshold"
# Every reason the gate abstains for before the generator runs (the evaluation's triage reads them).
GATE_REASONS = frozenset({NO_CANDIDATES, BELOW_THRESHOLD})


def should_abstain(
    top_rerank_score: float | None, decision: AnswerDecision, scores_are_calibrated: bool
) -> AbstainDecision:
    """Abstain before generation when the best candidate's reranker score is below the decision's threshold and
    outside its second level. Scores from a passthrough or a degraded (fused-order) path carry no calibrated
    meaning, so they never trigger the gate; the generator's own not-in-context check still applies."""
    if top_rerank_score is None:
        return AbstainDecision(True, NO_CANDIDATES)
    if not scores_are_calibrated or top_rerank_score >= decision.threshold:
        return AbstainDecision(False, "")
    if decision.needs_support(top_rerank_score):
        return AbstainDecision(False, "", needs_support=True)
    return AbstainDecision(True, BELOW_THRESHOLD)


def supported(answer, top_rerank_score: float | None, decision: AnswerDecision) -> bool:
    """Whether a generated answer is given under the decision (an abstention never is, nor one without scores)."""
    return not answer.abstained and top_rerank_score is not None and decision.answers(top_rerank_score, answer.coverage)


def invalid_citations(citations, context: dict) -> str:
    """Why an answer's citations cannot be trusted ('' when they can). There must be at least one, and
    each must point into a passage the generator was given, down to the character: same document and
    version, a span inside that chunk's span, a quote equal to the chunk's text there, and that span one of
    the chunk's answer units (what the generators read and cite). The text before
    the first colon is the reason's metric label. `citations`
    and the `context` values (chunk id -> chunk) are protobuf messages or shared.model objects alike."""
    if not citations:
        return "answer has no citation"
    foreign = [c.chunk_id for c in citations if c.chunk_id not in context]
    if foreign:
        return f"cited ids not in the context: {', '.join(foreign)}"
    units: dict[str, set[tuple[int, int]]] = {}  # per cited chunk, computed once (~0.5 ms for 1,500 characters)
    for c in citations:
        chunk = context[c.chunk_id]
        if (c.document_id, c.version) != (chunk.meta.document_id, chunk.meta.version):
            return f"wrong document: {c.chunk_id} is not in {c.document_id}@{c.version}"
        if not chunk.char_start <= c.char_start < c.char_end <= chunk.char_end:
            return (
                f"span outside the chunk: {c.char_start}-{c.char_end} is not inside {c.chunk_id} "
                f"({chunk.char_start}-{chunk.char_end})"
            )
        if chunk.body[c.char_start - chunk.char_start : c.char_end - chunk.char_start] != c.quote:
            return f"quote differs from the source: {c.chunk_id} at {c.char_start}-{c.char_end}"
        # Generators read and cite answer units (shared.text.answer_units): a span that is not one of the
        # supplied passage's units was never evidence the generator was given, even if its words are there.
        if c.chunk_id not in units:
            units[c.chunk_id] = set(answer_units(chunk.body))
        if (c.char_start - chunk.char_start, c.char_end - chunk.char_start) not in units[c.chunk_id]:
            return f"span not a supplied unit: {c.chunk_id} at {c.char_start}-{c.char_end} is no answer unit of it"
    return ""
