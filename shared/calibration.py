"""The stored answer decision (the abstention threshold, and the second level that reads the answer's coverage)
and the reranker model it was calibrated for."""

import dataclasses
import json
from pathlib import Path


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


def save(calibration: Calibration, path: str) -> None:
    Path(path).write_text(json.dumps(dataclasses.asdict(calibration), indent=2) + "\n")


def load(path: str) -> Calibration:
    return Calibration(**json.loads(Path(path).read_text()))
