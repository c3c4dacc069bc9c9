"""Choosing the answer decision on labelled cases with unanswerable questions.

Run the cases with the gate off, so every question reaches the generator; then for each candidate
threshold t a question is answered when its top rerank score >= t and the generator answered.
Pick the t that answers the most answerable questions while the false-answer rate on the
unanswerable ones stays within the target.

The decision has a second level (choose_decision): below t, a question whose top score reaches a lower
threshold s is answered when the generator's answer covers at least a share c of its content words. The
three are fitted together, for the same target.
"""

import dataclasses
import time

import numpy as np

from services.evaluation.cases import EvalCase, Gold, reported_answerable
from services.evaluation.runner import CaseResult
from shared.calibration import AnswerDecision, Calibration


def choose_threshold(results: list[CaseResult], target_far: float) -> tuple[float, float, float, float]:
    """(threshold, false-answer rate, answered share of answerable, correct share of answerable)."""
    scored = [r for r in results if r.top_rerank_score is not None]
    answerable = [r for r in scored if r.case.answerable]
    unanswerable = [r for r in scored if not r.case.answerable]
    best: tuple[tuple[float, float, float], tuple[float, float, float, float]] | None = None
    thresholds = {float("-inf")} | {s for r in scored if (s := r.top_rerank_score) is not None}
    for t in sorted(thresholds):

        def passes(r, t=t):
            return r.answered and r.top_rerank_score >= t

        far = sum(passes(r) for r in unanswerable) / max(len(unanswerable), 1)
        if far > target_far + 1e-12:
            continue
        answered = sum(passes(r) for r in answerable) / max(len(answerable), 1)
        correct = sum(passes(r) and bool(r.answer_correct) for r in answerable) / max(len(answerable), 1)
        # Most correct answers first, then most answers; at a tie the lower threshold abstains less.
        key = (correct, answered, -t)
        if best is None or key > best[0]:
            best = (key, (t, far, answered, correct))
    if best is None:
        raise ValueError(f"no threshold meets a false-answer rate of {target_far:.0%}")
    return best[1]


@dataclasses.dataclass(frozen=True)
class Decision:
    rule: AnswerDecision
    false_answer_rate: float
    answered: float  # share of the answerable questions answered
    correct: float  # share of the answerable questions answered right


def choose_decision(results: list[CaseResult], target_far: float) -> Decision:
    """The two-level decision (see the module docstring) that answers the most answerable questions right within
    the target false-answer rate; at a tie, the most answered, then the higher (more cautious) second level. One
    level when a second adds no right answer."""
    scored = [r for r in results if r.top_rerank_score is not None]
    top = np.array([r.top_rerank_score for r in scored])
    coverage = np.array([r.coverage for r in scored])
    answered = np.array([r.answered for r in scored])
    answerable = np.array([r.case.answerable for r in scored])
    correct = np.array([bool(r.answer_correct) for r in scored]) & answerable
    n_answerable, n_unanswerable = max(int(answerable.sum()), 1), max(int((~answerable).sum()), 1)
    levels = np.unique(np.concatenate([[-np.inf], top]))
    first = top[None, :] >= levels[:, None]  # one row per threshold t
    t, far, share, right = choose_threshold(scored, target_far)
    best = (right, share, np.inf, np.inf), Decision(AnswerDecision(t), far, share, right)  # a tie keeps one level
    for c in np.unique(coverage[answered]):
        for s in levels:
            second = answered & (top >= s) & (coverage >= c)
            passes = answered[None, :] & (first | second[None, :])  # every t at once
            fars = (passes & ~answerable).sum(axis=1) / n_unanswerable
            rights = (passes & correct).sum(axis=1) / n_answerable
            shares = (passes & answerable).sum(axis=1) / n_answerable
            ok = np.flatnonzero((fars <= target_far + 1e-12) & (levels >= s))
            if ok.size == 0:
                continue
            i = ok[np.lexsort((-levels[ok], shares[ok], rights[ok]))[-1]]  # most right, then answered, lowest t
            key = (rights[i], shares[i], s, c)
            if key > best[0]:
                best = (
                    key,
                    Decision(
                        AnswerDecision(float(levels[i]), float(s), float(c)),
                        float(fars[i]),
                        float(shares[i]),
                        float(rights[i]),
                    ),
                )
    return best[1]


def calibrate(
    results: list[CaseResult], reranker_model_id: str, generator_id: str, target_far: float, source: str
) -> Calibration:
    decision = choose_decision(results, target_far)
    rule = decision.rule
    return Calibration(
        threshold=rule.threshold if rule.threshold != float("-inf") else -1.0,
        reranker_model_id=reranker_model_id,
        target_false_answer_rate=target_far,
        false_answer_rate=round(decision.false_answer_rate, 4),
        answered_answerable_rate=round(decision.answered, 4),
        correct_answerable_rate=round(decision.correct, 4),
        cases=len(results),
        generator_id=generator_id,
        source=source,
        calibrated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        support_threshold=rule.support_threshold,
        min_coverage=rule.min_coverage,
    )


def gated_outcome(results: list[CaseResult], decision: AnswerDecision) -> dict:
    """The answer metrics the decision produces, from a run with the gate off. Exact, not an estimate: the
    decision only chooses whether the (deterministic) generator's answer is given."""
    answerable = [r for r in results if r.case.answerable]
    unanswerable = [r for r in results if not r.case.answerable]

    def passes(r):
        return r.answered and r.top_rerank_score is not None and decision.answers(r.top_rerank_score, r.coverage)

    answered = [r for r in results if passes(r)]
    return {
        "threshold": decision.threshold,
        "false_answer_rate": round(sum(passes(r) for r in unanswerable) / max(len(unanswerable), 1), 4),
        "over_abstention_rate": round(sum(not passes(r) for r in answerable) / max(len(answerable), 1), 4),
        "citation_validity": round(sum(bool(r.citation_valid) for r in answered) / len(answered), 4)
        if answered
        else 1.0,
        "answer_accuracy": round(
            sum(passes(r) and bool(r.answer_correct) for r in answerable) / max(len(answerable), 1), 4
        ),
        "wrong_answer_rate": round(
            sum(passes(r) and not r.answer_correct for r in answerable) / max(sum(passes(r) for r in answerable), 1), 4
        ),
    }


def results_from_report(report: dict) -> list[CaseResult]:
    """Case results back from a report.json (enough for calibration and gated outcomes)."""
    out = []
    for c in report["cases"]:
        answerable = reported_answerable(c)
        case = EvalCase(
            c["id"], c["question"], "", c["category"], [Gold("evidence")] if answerable else [], c.get("split", "")
        )
        r = CaseResult(
            case,
            c["gold_ranks"],
            [],
            0,
            {},
            answered=c["answered"],
            citation_valid=c["citation_valid"],
            answer_correct=c["answer_correct"],
        )
        r.top_rerank_score = c["top_rerank_score"]
        r.coverage = c.get("coverage", 0.0)
        out.append(r)
    return out
