"""The gateway's decisions, kept free of gRPC so they can be tested alone."""

import dataclasses


@dataclasses.dataclass(frozen=True)
class AbstainDecision:
    abstain: bool
    reason: str


def should_abstain(top_rerank_score: float | None, threshold: float, scores_are_calibrated: bool) -> AbstainDecision:
    """Abstain before generation when the best candidate's reranker score is below the threshold.
    Scores from a passthrough or a degraded (fused-order) path carry no calibrated meaning, so they
    never trigger the gate; the generator's own not-in-context check still applies."""
    if top_rerank_score is None:
        return AbstainDecision(True, "no_candidates")
    if scores_are_calibrated and top_rerank_score < threshold:
        return AbstainDecision(True, "below_threshold")
    return AbstainDecision(False, "")


def invalid_citations(cited_ids: list[str], context_ids: set[str]) -> str:
    """Why an answer's citations cannot be trusted ('' when they can): at least one citation, and
    every cited id must be a passage the generator was given."""
    if not cited_ids:
        return "answer has no citation"
    foreign = [cid for cid in cited_ids if cid not in context_ids]
    if foreign:
        return f"cited ids not in the context: {', '.join(foreign)}"
    return ""
