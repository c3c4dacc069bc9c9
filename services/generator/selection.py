"""Answer selection as ranking: every answer unit of the context passages is scored by a small learned
model, and one calibrated probability decides both which units answer and whether to answer at all.

Features are cheap and read what the funnel already computed: the bi-encoder similarity of the question
with the unit under its heading (the maxsim reranker leaves it per unit in the passage's scores), lexical and
identifier coverage, the table header a row is read with, the passage's rerank score and rank, the unit's
kind, position and length. Two models trained on the labelled train split (`ragmesh train-selector`) read
them: LightGBM trees score each unit's support, and a logistic regression over the best supports, passage
scores and coverage gives the probability that the question is answered, compared with a calibrated
threshold. The card (JSON: both models, the threshold, the training data's hash) is versioned like the
reranker cards.
"""

import dataclasses
import functools
import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from services.generator.support import unit_text
from shared.model import ScoredChunk
from shared.text import (
    answer_units,
    chunk_words,
    content_terms,
    identifiers,
    is_heading_line,
    is_list_item,
    is_message_header,
    is_table_header,
    table_header_before,
)

FEATURES = (
    "similarity",
    "similarity_missing",
    "similarity_gap",
    "similarity_rank",
    "passage_score",
    "passage_score_gap",
    "passage_rank",
    "coverage",
    "coverage_unit_only",
    "coverage_heading",
    "coverage_gap",
    "coverage_idf",
    "coverage_idf_gap",
    "bigrams",
    "identifiers_named",
    "identifiers_covered",
    "identifiers_foreign",
    "asks_quantity",
    "has_number",
    "rule_supported",
    "passage_missing",
    "table_row",
    "list_item",
    "inline_code",
    "table_header_coverage",
    "position",
    "length",
    "question_terms",
)
# Questions whose answer is a number, a duration, a price or a limit.
_QUANTITY = re.compile(
    r"\b(how (long|many|much|fast|soon|often|late|early)|when|limit|max(imum)?|min(imum)?|default|"
    r"price|cost|fee|rate|days?|hours?|weeks?|months?|percent|%|deadline|within|until)\b",
    re.I,
)
_NUMBER = re.compile(r"\d")
DEFAULT_CARD = Path(__file__).resolve().parents[2] / "eval" / "answer-selector.json"


@dataclasses.dataclass
class UnitCandidate:
    passage: int  # index of the passage in the context
    start: int  # offsets into the passage's chunk body
    end: int
    features: dict[str, float]
    terms: frozenset[str] = frozenset()  # question terms it covers (context-level features)
    text: str = ""  # what the support reader reads: the unit under its heading path (support.unit_text)


def candidates(query: str, passages: list[ScoredChunk]) -> list[UnitCandidate]:
    """Every quotable unit of the passages, with its features (gaps are taken against the whole context)."""
    wanted = content_terms(query)
    named = identifiers(query)
    asks_quantity = float(bool(_QUANTITY.search(query)))
    pairs = _bigrams(query)
    out: list[UnitCandidate] = []
    for rank, passage in enumerate(passages):
        body = passage.chunk.body
        heading = content_terms(" ".join(passage.chunk.heading_path) or passage.chunk.meta.title)
        similarity = passage.scores.unit_similarity
        passage_terms = content_terms(chunk_words(passage.chunk))
        units = answer_units(body)
        for index, (start, end) in enumerate(units):
            text = body[start:end].strip()
            if is_heading_line(text, passage.chunk.heading_path) or is_message_header(text):
                continue  # a heading line restates the path, a message header its subject: neither answers
            kind_table = text.startswith("|")
            if kind_table and is_table_header(body, end):
                continue  # the header row itself: it is read with each row instead
            header = table_header_before(body, start) if kind_table else ""
            terms = content_terms(text)
            header_terms = content_terms(header)
            covered = (terms | heading | header_terms) & wanted
            sim = similarity[index] if index < len(similarity) else float("nan")
            unit_ids = identifiers(text + " " + " ".join(passage.chunk.heading_path))
            out.append(
                UnitCandidate(
                    rank,
                    start,
                    end,
                    {
                        "similarity": sim,
                        "passage_score": passage.scores.rerank_score,
                        "passage_rank": rank,
                        "coverage": len(covered) / max(len(wanted), 1),
                        "coverage_unit_only": len(terms & wanted) / max(len(wanted), 1),
                        "coverage_heading": len(heading & wanted) / max(len(wanted), 1),
                        "identifiers_named": float(bool(named)),
                        "identifiers_covered": float(bool(named) and named <= unit_ids),
                        # A unit about E-4421 does not answer a question about E-4412.
                        "identifiers_foreign": float(bool(named) and bool(unit_ids - named) and not named <= unit_ids),
                        "bigrams": len(pairs & _bigrams(text)) / max(len(pairs), 1),
                        # The original extractive rule: every named identifier and half the question's words.
                        "rule_supported": float(named <= unit_ids and len(covered) >= 0.5 * len(wanted)),
                        "passage_missing": len(wanted - passage_terms) / max(len(wanted), 1),
                        "asks_quantity": asks_quantity,
                        "has_number": float(bool(_NUMBER.search(text))),
                        "table_row": float(kind_table),
                        "list_item": float(is_list_item(text)),
                        "inline_code": float(text.count("`") >= 2),
                        "table_header_coverage": len(header_terms & wanted) / max(len(wanted), 1),
                        "position": index / max(len(units), 1),
                        "length": math.log1p(len(text.split())),
                        "question_terms": math.log1p(len(wanted)),
                    },
                    frozenset(covered),
                    unit_text(passage, start, end, header),
                )
            )
    _add_context_features(out)
    return out


def _bigrams(text: str) -> set[tuple[str, str]]:
    words = [w for w in re.findall(r"[a-z0-9]+(?:[-.][a-z0-9]+)*", text.lower())]
    return set(zip(words, words[1:], strict=False))


def _add_context_features(units: list[UnitCandidate]) -> None:
    """Features relative to the rest of the context: gaps to the best, ranks, and coverage weighted by
    how rare each question term is among the context's units (a term every unit has tells nothing)."""
    document_frequency: dict[str, int] = {}
    for u in units:
        for term in u.terms:
            document_frequency[term] = document_frequency.get(term, 0) + 1
    idf = {t: math.log(1 + len(units) / n) for t, n in document_frequency.items()}
    total_idf = sum(idf.values()) or 1.0
    for u in units:
        u.features["coverage_idf"] = sum(idf[t] for t in u.terms) / total_idf
    best_idf = max((u.features["coverage_idf"] for u in units), default=0.0)
    present = [u.features["similarity"] for u in units if not math.isnan(u.features["similarity"])]
    floor = min(present) if present else 0.0
    best_sim = max(present) if present else 0.0
    best_passage = max((u.features["passage_score"] for u in units), default=0.0)
    best_coverage = max((u.features["coverage"] for u in units), default=0.0)
    for u in units:
        f = u.features
        f["similarity_missing"] = float(math.isnan(f["similarity"]))
        if math.isnan(f["similarity"]):
            f["similarity"] = floor  # no view of its own (past the view limit): as weak as the weakest
        f["similarity_gap"] = f["similarity"] - best_sim
        f["passage_score_gap"] = f["passage_score"] - best_passage
        f["coverage_gap"] = f["coverage"] - best_coverage
        f["coverage_idf_gap"] = f["coverage_idf"] - best_idf
    order = sorted(range(len(units)), key=lambda i: -units[i].features["similarity"])
    for position, i in enumerate(order):
        units[i].features["similarity_rank"] = 1.0 / (1 + position)


def matrix(units: list[UnitCandidate]) -> np.ndarray:
    return np.array([[u.features[name] for name in FEATURES] for u in units], dtype=np.float64).reshape(
        len(units), len(FEATURES)
    )


ANSWER_FEATURES = (
    "best_support",
    "second_support",
    "support_margin",
    "top_passage_score",
    "best_similarity",
    "best_coverage",
    "best_coverage_idf",
    "identifiers_named",
    "identifiers_resolved",
    "question_terms",
    "rule_supported",
    "best_unit_passage_missing",
    "context_missing",
)


def answer_features(units: list[UnitCandidate], support: np.ndarray) -> np.ndarray:
    """The question-level evidence the answer decision reads: how well the best units are supported, how
    strong the passages are, and whether anything covers the question's words and identifiers."""
    if not units:
        return np.zeros((1, len(ANSWER_FEATURES)))
    ordered = np.sort(support)[::-1]
    top = units[int(np.argmax(support))].features
    second = float(ordered[1]) if len(ordered) > 1 else 0.0
    best = [u.features for u in units]
    values = {
        "best_support": float(ordered[0]),
        "second_support": second,
        "support_margin": float(ordered[0]) - second,
        "top_passage_score": max(f["passage_score"] for f in best),
        "best_similarity": max(f["similarity"] for f in best),
        "best_coverage": max(f["coverage"] for f in best),
        "best_coverage_idf": max(f["coverage_idf"] for f in best),
        "identifiers_named": best[0]["identifiers_named"],
        "identifiers_resolved": max(f["identifiers_covered"] for f in best),
        "question_terms": best[0]["question_terms"],
        "rule_supported": max(f["rule_supported"] for f in best),
        # A question word that the best unit's passage (title and headings included) never uses.
        "best_unit_passage_missing": top["passage_missing"],
        "context_missing": min(f["passage_missing"] for f in best),
    }
    return np.array([[values[name] for name in ANSWER_FEATURES]])


@dataclasses.dataclass(frozen=True)
class Logistic:
    """A standardised logistic regression, stored as plain numbers."""

    features: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if not len(x):
            return np.zeros(0)
        z = ((x - np.asarray(self.mean)) / np.asarray(self.scale)) @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    @classmethod
    def from_dict(cls, data: dict) -> "Logistic":
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return cls(**values)


@dataclasses.dataclass(frozen=True)
class Boosted:
    """Gradient-boosted trees (LightGBM), stored as LightGBM's own text model format."""

    features: tuple[str, ...]
    model: str

    def __post_init__(self) -> None:
        _ = self._booster  # parse the model now: a broken card fails when it is loaded

    @functools.cached_property
    def _booster(self) -> Any:
        import lightgbm

        return lightgbm.Booster(model_str=self.model)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self._booster.predict(x) if len(x) else np.zeros(0)

    @classmethod
    def from_dict(cls, data: dict) -> "Boosted":
        return cls(tuple(data["features"]), data["model"])


def card_id(kind: str, numbers: list[object]) -> str:
    """A card's model id: its kind and a hash of every fitted number, so a refit card gets a new id."""
    return f"{kind}-{hashlib.sha256(json.dumps(numbers).encode()).hexdigest()[:8]}"


def require_features(path: str | Path, fitted: tuple[str, ...], computed: tuple[str, ...], remedy: str) -> None:
    """Refuses a card fitted on other features than this code computes (its weights would read the wrong columns)."""
    if fitted != computed:
        changed = sorted(set(computed) ^ set(fitted))
        raise ValueError(f"{path}: trained on other features than this code computes ({changed}); {remedy}")


@dataclasses.dataclass(frozen=True)
class SelectorCard:
    """A trained selector: the unit model (which units support an answer), the answer model (is the question
    answered by the best of them) and the calibrated threshold on the latter."""

    unit: Boosted
    answer: Logistic
    threshold: float
    companion_ratio: float = 0.5
    training: dict = dataclasses.field(default_factory=dict)

    @property
    def model_id(self) -> str:
        numbers = [self.unit.model, self.answer.coef, self.answer.intercept, self.threshold]
        return card_id("gbdt+logreg", numbers)

    def decide(self, units: list[UnitCandidate], max_units: int) -> tuple[list[int], float]:
        """(indices of the units that answer, best first — empty to abstain; the answer probability)."""
        if not units:
            return [], 0.0
        support = self.unit(matrix(units))
        answer_probability = float(self.answer(answer_features(units, support))[0])
        if answer_probability < self.threshold:
            return [], answer_probability
        return companions(support, max_units, self.companion_ratio), answer_probability

    def save(self, path: str | Path) -> None:
        data = dataclasses.asdict(self)
        Path(path).write_text(json.dumps(data, indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "SelectorCard":
        data = json.loads(Path(path).read_text())
        card = cls(Boosted.from_dict(data.pop("unit")), Logistic.from_dict(data.pop("answer")), **data)
        for model, names in ((card.unit, FEATURES), (card.answer, ANSWER_FEATURES)):
            require_features(path, model.features, names, "retrain with `ragmesh train-selector`")
        return card


def companions(support: np.ndarray, max_units: int, ratio: float = 0.5) -> list[int]:
    """The best-supported unit and up to max_units - 1 others with at least `ratio` of its support: a
    multi-part question gets its other parts, a single-fact question does not get padding."""
    order = np.argsort(-support, kind="stable")
    best = float(support[order[0]])
    return [int(i) for i in order[:max_units] if support[i] >= ratio * best]


def shortlist(units: list[UnitCandidate], limit: int, budget_chars: int) -> list[int]:
    """The units an LLM reads instead of whole passages: the strongest evidence first (the coverage rule's
    verdict, then IDF-weighted coverage of the question, the reranker's per-unit similarity, the passage's
    rank), at most `limit` units and `budget_chars` characters of unit text, so the prompt stays bounded.
    Returned in reading order (passage, then position), which a small model follows more easily."""

    def strength(i: int) -> tuple[float, ...]:
        f = units[i].features
        return (-f["rule_supported"], -f["coverage_idf"], -f["similarity"], f["passage_rank"], f["position"])

    chosen: list[int] = []
    used = 0
    for i in sorted(range(len(units)), key=strength):
        if len(chosen) == limit:
            break
        if used + len(units[i].text) > budget_chars:
            continue  # a long unit gives way to shorter ones that fit
        chosen.append(i)
        used += len(units[i].text)
    return sorted(chosen, key=lambda i: (units[i].passage, units[i].start))
