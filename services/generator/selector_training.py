"""`ragmesh train-selector`: fit the answer selector on the labelled train split, calibrate its threshold.

1. Every case (all splits) is asked through a private mesh with the gateway's gate off, so each question's
   context (the passages the generator receives, with the reranker's per-unit similarities) is recorded.
2. Each unit of each context is labelled: it answers when its span overlaps the case's gold evidence.
   Units of unanswerable questions are all negatives.
3. The unit model (LightGBM: small trees capture interactions such as "names an identifier and covers it")
   is fitted on the train split; on the train split's out-of-fold questions it put a gold unit first 0.67 of
   the time against 0.62 for a logistic regression. The answer model (logistic regression over the
   question's best supports, passage scores and coverage) is fitted on out-of-fold unit supports of the
   train split, labelled by whether the units the generator would quote hold gold evidence.
4. The answer threshold is calibrated on held-out answer probabilities (train: cross-validated, grouped by
   document; dev: the model fitted on train) for a false-answer-rate target on the unanswerable cases,
   choosing the threshold that answers the most answerable cases correctly. The test split is only reported.
"""

import dataclasses
import functools
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np
from google.protobuf.json_format import MessageToDict

from ragmesh.client import RagmeshClient
from services.evaluation.cases import EvalCase, load_cases
from services.evaluation.runner import cites_gold
from services.generator import selection
from shared import convert
from shared.ratelimit import within_rate_limit
from shared.stubs import gateway_pb2, gateway_pb2_grpc


def record_contexts(stub, cases: list[EvalCase], timeout: float) -> list[dict]:
    rows = []
    for n, case in enumerate(cases, start=1):
        request = gateway_pb2.AskRequest(tenant_id=case.tenant, question=case.question)
        response, _ = within_rate_limit(functools.partial(stub.Ask, request, timeout=timeout))
        rows.append({"id": case.case_id, "context": [MessageToDict(p) for p in response.context]})
        if n % 50 == 0 or n == len(cases):
            print(f"recorded {n}/{len(cases)} contexts", file=sys.stderr, flush=True)
    return rows


def _overlaps_gold(case: EvalCase, passage, start: int, end: int) -> bool:
    chunk = passage.chunk
    return cites_gold(
        case.gold, chunk.meta.document_id, chunk.meta.version, chunk.char_start + start, chunk.char_start + end
    )


class Dataset:
    """Units with features and labels, grouped by case."""

    def __init__(self, cases: list[EvalCase], contexts: dict[str, list[dict]]):
        self.cases = cases
        self.units: list[list[selection.UnitCandidate]] = []
        self.labels: list[np.ndarray] = []
        self.x: list[np.ndarray] = []
        for case in cases:
            passages = [convert.scored_from_json(p) for p in contexts[case.case_id]]
            units = selection.candidates(case.question, passages)
            self.units.append(units)
            self.x.append(selection.matrix(units))
            self.labels.append(
                np.array([_overlaps_gold(case, passages[u.passage], u.start, u.end) for u in units], dtype=bool)
            )

    def indices(self, split: str) -> list[int]:
        return [i for i, c in enumerate(self.cases) if c.split == split]

    def stack(self, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(unit features, unit labels) of the rows' cases, stacked."""
        kept = [i for i in rows if len(self.x[i])]
        return np.vstack([self.x[i] for i in kept]), np.concatenate([self.labels[i] for i in kept])


def _fit(x: np.ndarray, y: np.ndarray, names: tuple[str, ...]) -> selection.Logistic:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=1.0, max_iter=5000).fit(scaler.transform(x), y)
    return selection.Logistic(
        names,
        tuple(scaler.mean_.tolist()),
        tuple(scaler.scale_.tolist()),
        tuple(model.coef_[0].tolist()),
        float(model.intercept_[0]),
    )


def _fit_units(x: np.ndarray, y: np.ndarray, seed: int = 0) -> selection.Boosted:
    """Small, strongly regularised trees: a few hundred positives among thousands of units."""
    import lightgbm

    model = lightgbm.LGBMClassifier(
        n_estimators=150,
        learning_rate=0.05,
        num_leaves=8,
        min_child_samples=20,
        subsample=0.8,
        subsample_freq=1,
        colsample_bytree=0.8,
        random_state=seed,
        n_jobs=1,
        verbose=-1,
    ).fit(x, y)
    return selection.Boosted(selection.FEATURES, model.booster_.model_to_string())


def _group(case: EvalCase) -> str:
    return case.gold[0].doc_id if case.gold else case.case_id


def _folds(data: Dataset, rows: list[int], n: int = 5):
    """(fit rows, held-out rows) pairs, grouped by document so no document is on both sides."""
    from sklearn.model_selection import GroupKFold

    for fit, held in GroupKFold(n_splits=n).split(rows, groups=[_group(data.cases[i]) for i in rows]):
        yield [rows[k] for k in fit], [rows[k] for k in held]


class Stage:
    """Unit model + answer model + threshold: what the card holds, applied to dataset rows."""

    def __init__(self, data: Dataset, max_units: int, ratio: float):
        self.data, self.max_units, self.ratio = data, max_units, ratio

    def supports(self, unit_model, rows) -> dict[int, np.ndarray]:
        return {i: unit_model(self.data.x[i]) for i in rows}

    def answer_x(self, supports: dict[int, np.ndarray], rows) -> np.ndarray:
        return np.vstack([selection.answer_features(self.data.units[i], supports[i]) for i in rows])

    def chosen(self, supports, i) -> list[int]:
        return selection.companions(supports[i], self.max_units, self.ratio) if len(supports[i]) else []

    def answer_y(self, supports, rows) -> np.ndarray:
        """A question is answered right when the units it would quote hold gold evidence."""
        return np.array([any(self.data.labels[i][k] for k in self.chosen(supports, i)) for i in rows])


def outcomes(stage: Stage, rows, supports, answer_probs: dict[int, float], threshold: float) -> dict:
    """Case-level answer metrics at `threshold`, exactly as the generator decides."""
    data = stage.data
    answerable = [i for i in rows if data.cases[i].answerable]
    unanswerable = [i for i in rows if not data.cases[i].answerable]
    answered = {i for i in rows if len(supports[i]) and answer_probs[i] >= threshold}
    correct = {i for i in answered if any(data.labels[i][k] for k in stage.chosen(supports, i))}
    given = [i for i in answerable if i in answered]
    return {
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "answer_accuracy": round(len(correct & set(answerable)) / max(len(answerable), 1), 4),
        "wrong_answer_rate": round(sum(i not in correct for i in given) / max(len(given), 1), 4),
        "over_abstention_rate": round(sum(i not in answered for i in answerable) / max(len(answerable), 1), 4),
        "false_answer_rate": round(sum(i in answered for i in unanswerable) / max(len(unanswerable), 1), 4),
    }


def choose_threshold(stage: Stage, rows, supports, answer_probs, target_far: float) -> float:
    """The threshold with the most correct answers (then the fewest wrong ones) within the FAR target."""
    best_key, best_t = None, 1.0
    for t in sorted({answer_probs[i] for i in rows}):
        o = outcomes(stage, rows, supports, answer_probs, t)
        if o["false_answer_rate"] > target_far + 1e-12:
            continue
        key = (o["answer_accuracy"], -o["wrong_answer_rate"], -t)
        if best_key is None or key > best_key:
            best_key, best_t = key, t
    return best_t


def train(data: Dataset, target_far: float, max_units: int, ratio: float = 0.5) -> tuple[selection.SelectorCard, dict]:
    from sklearn.metrics import average_precision_score

    stage = Stage(data, max_units, ratio)
    rows = {s: [i for i in data.indices(s) if len(data.x[i])] for s in ("train", "dev", "test")}
    x_train, y_train = data.stack(rows["train"])
    x_dev, y_dev = data.stack(rows["dev"])
    unit_model = _fit_units(x_train, y_train)
    # Answer model, trained on out-of-fold unit supports (what an unseen question's supports look like).
    supports: dict[int, np.ndarray] = {}
    for fit, held in _folds(data, rows["train"]):
        x, y = data.stack(fit)
        supports.update(stage.supports(_fit_units(x, y), held))
    supports.update(stage.supports(unit_model, rows["dev"] + rows["test"]))
    answer_x = {i: stage.answer_x(supports, [i]) for s in rows.values() for i in s}
    answer_y = {i: bool(stage.answer_y(supports, [i])[0]) for s in rows.values() for i in s}

    def fit_answer(fit_rows):
        return _fit(
            np.vstack([answer_x[i] for i in fit_rows]),
            np.array([answer_y[i] for i in fit_rows]),
            selection.ANSWER_FEATURES,
        )

    # Held-out answer probabilities for calibration: train out-of-fold, dev from the model fitted on train.
    answer_probs: dict[int, float] = {}
    for fit, held in _folds(data, rows["train"]):
        model = fit_answer(fit)
        answer_probs.update({i: float(model(answer_x[i])[0]) for i in held})
    answer_model = fit_answer(rows["train"])
    answer_probs.update({i: float(answer_model(answer_x[i])[0]) for i in rows["dev"] + rows["test"]})
    calibration_rows = rows["train"] + rows["dev"]
    threshold = choose_threshold(stage, calibration_rows, supports, answer_probs, target_far)
    report = {
        "dev_unit_average_precision": round(float(average_precision_score(y_dev, unit_model(x_dev))), 4),
        "threshold": round(threshold, 4),
        **{split: outcomes(stage, rows[split], supports, answer_probs, threshold) for split in rows},
        "units": {"train": int(len(y_train)), "train_positive": int(y_train.sum())},
        "answer_coefficients": dict(
            zip(selection.ANSWER_FEATURES, np.round(answer_model.coef, 3).tolist(), strict=True)
        ),
    }
    card = selection.SelectorCard(
        unit_model,
        answer_model,
        float(threshold),
        ratio,
        training={
            "unit_model": "lightgbm binary, 150 trees of 8 leaves",
            "target_false_answer_rate": target_far,
            "max_units": max_units,
            "train_cases": len(rows["train"]),
            "calibration_cases": len(calibration_rows),
            "train_out_of_fold": report["train"],
            "dev": report["dev"],
        },
    )
    return card, report


def add_context_arguments(p, data_dir: str) -> None:
    """The options `ensure_contexts` reads: the cases, the recorded contexts, and the private mesh (or gateway)
    that records them; shared by train-selector, train-support and fit-reader-decision."""
    from services.evaluation.command import env_pair

    p.add_argument("--cases", default="eval/cases/sample.jsonl")
    p.add_argument("--corpus", action="append")
    p.add_argument(
        "--contexts",
        default="eval/out/selector/contexts.jsonl",
        help="recorded contexts (made by a private mesh when missing or with --record)",
    )
    p.add_argument("--record", action="store_true", help="record the contexts again")
    p.add_argument("--data-dir", default=data_dir)
    p.add_argument("--env", type=env_pair, action="append", metavar="NAME=VALUE")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--gateway", default="127.0.0.1:7070")
    p.set_defaults(spawn=True)


def ensure_contexts(args, cases: list[EvalCase]) -> bytes:
    """The recorded contexts file's bytes, recorded first by a private mesh when missing or asked for."""
    from services.evaluation.command import _ingest_corpus_dirs, _mesh_or_gateway

    contexts_file = Path(args.contexts)
    if args.record or not contexts_file.exists():
        args.spawn, args.env = (
            True,
            [
                ("RAGMESH_GATEWAY_ABSTAIN_THRESHOLD", "-1e9"),
                ("RAGMESH_GATEWAY_CALIBRATION_FILE", "none"),
                *(args.env or []),
            ],
        )
        with _mesh_or_gateway(args) as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            client = RagmeshClient(channel=channel, api_key="")
            _ingest_corpus_dirs(client, args.corpus or ["examples"], {c.tenant for c in cases}, args.timeout)
            rows = record_contexts(stub, cases, args.timeout)
        contexts_file.parent.mkdir(parents=True, exist_ok=True)
        contexts_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return contexts_file.read_bytes()


def run(args) -> int:
    cases = load_cases(args.cases, args.corpus or ["examples"])
    raw = ensure_contexts(args, cases)
    contexts = {r["id"]: r["context"] for r in map(json.loads, raw.decode().splitlines())}
    data = Dataset(cases, contexts)
    card, report = train(data, args.target_far, args.max_units)
    card = dataclasses.replace(
        card,
        training={
            **card.training,
            "cases_file": Path(args.cases).name,
            "contexts_sha256": hashlib.sha256(raw).hexdigest(),
            "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        },
    )
    card.save(args.out)
    print(json.dumps(report, indent=2))
    print(f"selector {card.model_id} (threshold {card.threshold:.4f}) written to {args.out}")
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("train-selector", help="train and calibrate the extractive generator's answer selector")
    add_context_arguments(p, ".ragmesh-data/train-selector")
    p.add_argument("--target-far", type=float, default=0.05)
    p.add_argument("--max-units", type=int, default=3)
    p.add_argument("--out", default=str(selection.DEFAULT_CARD))
    p.set_defaults(func=run)
