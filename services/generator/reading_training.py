"""`ragmesh fit-reader-decision`: fit and calibrate the answer decision over the support reader's scores.

A fine-tuned reader's probabilities on its own train questions are in-sample (too confident), so the decision
(a logistic regression over `reading.READER_FEATURES`, labelled by whether the units it would quote hold gold
evidence) is fitted only on questions the reader never trained on: the dev split, plus train questions scored by
fold readers (`ragmesh train-support --folds 2 --fold K`, one per fold, each trained without that fold) when
given; a reader that never saw the labelled cases (zero-shot) scores train itself. Held-out probabilities
(5 folds grouped by document) choose the threshold with the most correct answers at the false-answer-rate
target. The same recorded contexts give the shipped coverage rule + gate's outcome on the same cases (the rule's
answer, kept when the top passage score clears the calibrated gate threshold), so the two are compared on
identical contexts. Test figures are printed (unless --skip-test), never used.
"""

import hashlib
import json
import sys
from pathlib import Path

import numpy as np

from services.evaluation.cases import load_cases
from services.evaluation.runner import cites_any_gold
from services.generator import reading, selection, support
from services.generator.extractive import ExtractiveGenerator
from services.generator.selector_training import (
    Dataset,
    Stage,
    _fit,
    _folds,
    add_context_arguments,
    choose_threshold,
    ensure_contexts,
)
from services.generator.selector_training import outcomes as selector_outcomes
from shared import calibration, convert


def reader_scores(reader: support.SupportReader, data: Dataset, rows: list[int], cache: Path) -> dict[int, np.ndarray]:
    """The rows' unit probabilities, cached per reader version (scoring all units takes minutes on CPU)."""
    key = {data.cases[i].case_id: i for i in rows}
    if cache.exists():
        stored = np.load(cache)
        if set(stored.files) == set(key):
            return {key[c]: stored[c] for c in stored.files}
    scores = {}
    for n, i in enumerate(rows, start=1):
        scores[i] = reader.score(data.cases[i].question, [u.text for u in data.units[i]])
        if n % 100 == 0:
            print(f"{reader.model_id}: scored {n}/{len(rows)} cases", file=sys.stderr, flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, **{data.cases[i].case_id: s for i, s in scores.items()})  # type: ignore[arg-type]
    return scores


def rule_gate_outcomes(data: Dataset, contexts: dict, rows: list[int], gate: float) -> dict:
    """The shipped default on the same contexts: the coverage rule's answer, when the top score clears the gate."""
    rule = ExtractiveGenerator()
    answered, correct = set(), set()
    for i in rows:
        case = data.cases[i]
        passages = [convert.scored_from_json(p) for p in contexts[case.case_id]]
        if not passages or max(p.scores.rerank_score for p in passages) < gate:
            continue
        answer = rule.run(case.question, passages)
        if answer.abstained:
            continue
        answered.add(i)
        if cites_any_gold(case.gold, answer.citations):
            correct.add(i)
    answerable = [i for i in rows if data.cases[i].answerable]
    unanswerable = [i for i in rows if not data.cases[i].answerable]
    given = [i for i in answerable if i in answered]
    return {
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "answer_accuracy": round(len(correct & set(answerable)) / max(len(answerable), 1), 4),
        "wrong_answer_rate": round(sum(i not in correct for i in given) / max(len(given), 1), 4),
        "over_abstention_rate": round(sum(i not in answered for i in answerable) / max(len(answerable), 1), 4),
        "false_answer_rate": round(sum(i in answered for i in unanswerable) / max(len(unanswerable), 1), 4),
    }


def _reader(name: str, threads: int) -> support.SupportReader:
    folder = support.resolve(name)
    if folder is None:
        raise SystemExit(f"support reader {name!r} not found in {support.cache_root()}: `make support-reader`")
    reader = support.SupportReader(folder, threads)
    reader.warm_up()
    return reader


def _cache(args, reader: support.SupportReader) -> Path:
    return Path(args.contexts).with_name(f"support-{reader.model_id.rsplit('@', 1)[-1]}.npz")


def fit(args) -> int:
    cases = load_cases(args.cases, args.corpus or ["examples"])
    raw = ensure_contexts(args, cases)
    contexts = {r["id"]: r["context"] for r in map(json.loads, raw.decode().splitlines())}
    data = Dataset(cases, contexts)
    rows = {s: [i for i in data.indices(s) if len(data.units[i])] for s in ("train", "dev", "test")}
    if args.skip_test:
        rows["test"] = []  # scoring is slow on 2 CPU cores: decide on dev first
    reader = _reader(args.reader, args.threads)
    # A reader that never trained on the labelled cases (zero-shot) scores train too; a fine-tuned one does not.
    seen_train = bool(reader.card["data"].get("train_cases"))
    scored = rows["dev"] + rows["test"] + ([] if seen_train else rows["train"])
    scores = reader_scores(reader, data, scored, _cache(args, reader))
    # Train questions are scored by the fold reader that never saw them (held out of its training).
    held_out: list[int] = []
    for name in args.fold_reader or []:
        fold = _reader(name, args.threads)
        unseen = set(fold.card["data"]["held_out_train_cases"])
        fold_rows = [i for i in rows["train"] if data.cases[i].case_id in unseen]
        scores.update(reader_scores(fold, data, fold_rows, _cache(args, fold)))
        held_out += fold_rows
    if seen_train:
        rows["train"] = sorted(held_out)
    stage = Stage(data, args.max_units, args.ratio)
    x = {i: reading.reader_features(data.units[i], scores[i]) for s in rows.values() for i in s}
    y = {i: bool(stage.answer_y(scores, [i])[0]) for s in rows.values() for i in s}

    def fit_on(fit_rows: list[int]) -> selection.Logistic:
        return _fit(np.vstack([x[i] for i in fit_rows]), np.array([y[i] for i in fit_rows]), reading.READER_FEATURES)

    # Fitted and calibrated on questions the reader never trained on: dev, and train through the fold readers.
    fit_rows = rows["train"] + rows["dev"]
    held: dict[int, float] = {}
    for fold_fit, fold_held in _folds(data, fit_rows):
        model = fit_on(fold_fit)
        held.update({i: float(model(x[i])[0]) for i in fold_held})
    threshold = choose_threshold(stage, fit_rows, scores, held, args.target_far)
    model = fit_on(fit_rows)
    final = {i: float(model(x[i])[0]) for s in rows.values() for i in s}
    gate = calibration.load(args.calibration).threshold
    report = {
        "reader": reader.model_id,
        "threshold": round(threshold, 4),
        "gate_threshold_of_the_rule": gate,
        **{
            f"{split}_out_of_fold": selector_outcomes(stage, rows[split], scores, held, threshold)
            for split in ("train", "dev")
        },
        **{f"{split}_rule_gate": rule_gate_outcomes(data, contexts, rows[split], gate) for split in ("train", "dev")},
        "calibration_rows_out_of_fold": selector_outcomes(stage, fit_rows, scores, held, threshold),
        "calibration_rows_rule_gate": rule_gate_outcomes(data, contexts, fit_rows, gate),
        "test": selector_outcomes(stage, rows["test"], scores, final, threshold),
        "test_rule_gate": rule_gate_outcomes(data, contexts, rows["test"], gate),
        "coefficients": dict(zip(reading.READER_FEATURES, np.round(model.coef, 3).tolist(), strict=True)),
    }
    card = reading.ReaderCard(
        args.reader,
        reader.model_id,
        model,
        float(threshold),
        args.ratio,
        training={
            "fitted_on": "dev (the reader never trained on it)"
            + (" + train, scored by the fold readers that held each question out" if args.fold_reader else ""),
            "fold_readers": [r for r in args.fold_reader or []],
            "target_false_answer_rate": args.target_far,
            "calibration_cases": len(fit_rows),
            "out_of_fold": report["calibration_rows_out_of_fold"],
            # The shipped coverage rule + maxsim gate on the same cases and contexts, for comparison.
            "rule_gate_same_cases": report["calibration_rows_rule_gate"],
            "contexts_sha256": hashlib.sha256(raw).hexdigest(),
        },
    )
    card.save(args.out)
    print(json.dumps(report, indent=2))
    print(f"answer decision {card.model_id} (threshold {threshold:.4f}) written to {args.out}")
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("fit-reader-decision", help="fit the answer decision over the support reader's scores")
    add_context_arguments(p, ".ragmesh-data/fit-reader-decision")
    p.add_argument("--reader", default=support.DEFAULT_NAME)
    p.add_argument(
        "--fold-reader",
        action="append",
        help="a reader trained with `train-support --folds N --fold K` (one per fold): train questions join the "
        "fit with the probabilities of the fold reader that held them out",
    )
    p.add_argument("--calibration", default="eval/calibration.json", help="the gate's calibration (for the rule)")
    p.add_argument("--target-far", type=float, default=0.05)
    p.add_argument("--skip-test", action="store_true", help="do not score or report the test split")
    p.add_argument("--max-units", type=int, default=3)
    p.add_argument("--ratio", type=float, default=0.5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default=str(reading.DEFAULT_READER_CARD))
    p.set_defaults(func=fit)
