"""The stored answer decision (the abstention threshold, and the second level that reads the answer's coverage)
and the reranker model it was calibrated for."""

import dataclasses
import json
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class AnswerDecision:
    """When a question is answered, from its top rerank score and the generated answer's coverage (the share of
    the question's content words its best unit and that unit's passage hold, each weighted by how few units of
    the context hold it): at or above `threshold`; or, below it, at or above `support_threshold` (None: no second
    level) with an answer covering at least `min_coverage`. Passage
    evidence alone cannot tell "the passage answers it" from "the passage is about it"; a unit that holds most
    of the question's words can. The gateway, the in-process pipeline and the evaluation all apply this one rule."""

    threshold: float
    support_threshold: float | None = None
    min_coverage: float = 0.0

    def needs_support(self, top_rerank_score: float) -> bool:
        """Below the threshold but within the second level: worth generating, answered only with enough coverage."""
        return self.support_threshold is not None and self.support_threshold <= top_rerank_score < self.threshold

    def answers(self, top_rerank_score: float, coverage: float) -> bool:
        """Whether a generated answer (the generator did not abstain) is given."""
        return top_rerank_score >= self.threshold or (
            self.needs_support(top_rerank_score) and coverage >= self.min_coverage
        )


@dataclasses.dataclass(frozen=True)
class Calibration:
    threshold: float
    reranker_model_id: str
    target_false_answer_rate: float
    false_answer_rate: float
    answered_answerable_rate: float
    correct_answerable_rate: float
    cases: int
    generator_id: str = ""
    calibrated_at: str = ""
    source: str = ""
    # The decision's second level: below `threshold`, a question whose top score reaches `support_threshold` is
    # answered when the generator's answer covers at least `min_coverage` of its content words (None: one level).
    support_threshold: float | None = None
    min_coverage: float = 0.0

    def decision(self) -> AnswerDecision:
        return AnswerDecision(self.threshold, self.support_threshold, self.min_coverage)


def save(calibration: Calibration, path: str) -> None:
    Path(path).write_text(json.dumps(dataclasses.asdict(calibration), indent=2) + "\n")


def load(path: str) -> Calibration:
    return Calibration(**json.loads(Path(path).read_text()))
