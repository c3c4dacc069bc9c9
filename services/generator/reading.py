"""One answerability decision from the support reader: which units answer, and whether to answer at all.

The support reader (services/generator/support.py) gives each answer unit of the context a probability that
it supports an answer to the question. A small logistic model reads the question-level evidence (the best
and second-best unit support, the best unit's passage score and coverage, the top passage's score) and
gives P(answer is right); below the card's calibrated threshold the generator abstains, above it it quotes the
best-supported unit and its companions. The card (JSON) names the reader it was fitted with (id@version):
another reader's probabilities mean something else, so loading refuses a mismatch.
"""

import dataclasses
import json
import math
from pathlib import Path

import numpy as np

from services.generator.selection import Logistic, UnitCandidate, card_id, companions, require_features

READER_FEATURES = (
    "best_support_logit",
    "second_support_logit",
    "best_unit_passage_score",
    "top_passage_score",
    "best_unit_coverage",
)
DEFAULT_READER_CARD = Path(__file__).resolve().parents[2] / "eval" / "answer-reader.json"


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def reader_features(units: list[UnitCandidate], support: np.ndarray) -> np.ndarray:
    if not units:
        return np.zeros((1, len(READER_FEATURES)))
    order = np.argsort(-support, kind="stable")
    best = units[int(order[0])].features
    values = {
        "best_support_logit": _logit(float(support[order[0]])),
        "second_support_logit": _logit(float(support[order[1]])) if len(order) > 1 else _logit(0.0),
        "best_unit_passage_score": best["passage_score"],
        "top_passage_score": max(u.features["passage_score"] for u in units),
        "best_unit_coverage": best["coverage"],
    }
    return np.array([[values[name] for name in READER_FEATURES]])


@dataclasses.dataclass(frozen=True)
class ReaderCard:
    reader: str  # the reader's name in the support cache (or a folder)
    reader_model_id: str  # id@version of the reader the answer model was fitted on
    answer: Logistic
    threshold: float
    companion_ratio: float = 0.5
    training: dict = dataclasses.field(default_factory=dict)

    @property
    def model_id(self) -> str:
        numbers = [self.reader_model_id, self.answer.coef, self.answer.intercept, self.threshold]
        return card_id("reader+logreg", numbers)

    def decide(self, units: list[UnitCandidate], support: np.ndarray, max_units: int) -> tuple[list[int], float]:
        """(indices of the units that answer, best first — empty to abstain; the answer probability)."""
        if not units:
            return [], 0.0
        probability = float(self.answer(reader_features(units, support))[0])
        if probability < self.threshold:
            return [], probability
        return companions(support, max_units, self.companion_ratio), probability

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(dataclasses.asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "ReaderCard":
        data = json.loads(Path(path).read_text())
        card = cls(answer=Logistic.from_dict(data.pop("answer")), **data)
        require_features(path, card.answer.features, READER_FEATURES, "refit it")
        return card
