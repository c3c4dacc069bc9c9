"""`ragmesh train-support`: fine-tune the support reader (services/generator/support.py) on the train split.

Material: the contexts `ragmesh train-selector` records (the passages each labelled question's Ask handed the
generator, gate off). Every answer unit of them is a (question, unit under its heading) pair, labelled:
- positive: the unit overlaps the case's gold evidence;
- negative: any other unit of the retrieved passages, and every unit retrieved for an unanswerable question.
Only TRAIN split cases are used; each case gives all its positives and a seeded sample of its negatives
(the units the maxsim similarity ranks highest first: the near-misses), so CPU training stays short.

Pointwise binary cross-entropy (the reader's output is a probability that is compared across questions, not
only a ranking within one), from the project's sample cross-encoder checkpoint, seeded, time-boxed. The model
is exported to ONNX, dynamically quantised to int8 (per channel, MatMul only: the default settings were too
lossy for MiniLM, PLATFORM.md), and the int8 file is served when its probabilities stay within 0.05 of fp32 on
the dev units. The card's version is a hash of the training pairs and settings, like the reranker cards.
"""

import hashlib
import json
import logging
import random
import sys
import time
from pathlib import Path

import numpy as np

from services.generator import support
from services.generator.selector_training import Dataset, _folds

log = logging.getLogger("ragmesh.train")
DEFAULT_INIT = Path.home() / ".cache" / "ragmesh" / "rerankers" / "sample" / "checkpoint"


def reader_pairs(data: Dataset, rows: list[int], negatives: int, seed: int) -> list[tuple[str, str, float]]:
    """(question, unit text, label) for the rows' cases: every positive, and up to `negatives` negatives per
    case, half the most similar ones (hard) and half drawn at random from the rest."""
    rng = random.Random(seed)
    out: list[tuple[str, str, float]] = []
    for i in rows:
        question, units, labels = data.cases[i].question, data.units[i], data.labels[i]
        out += [(question, units[k].text, 1.0) for k in range(len(units)) if labels[k]]
        wrong = sorted((k for k in range(len(units)) if not labels[k]), key=lambda k: -units[k].features["similarity"])
        hard, rest = wrong[: negatives // 2], wrong[negatives // 2 :]
        picked = hard + rng.sample(rest, min(len(rest), negatives - len(hard)))
        out += [(question, units[k].text, 0.0) for k in picked]
    rng.shuffle(out)
    return out


def fine_tune(
    model, pairs: list[tuple[str, str, float]], epochs: int, lr: float, batch: int, seed: int, max_seconds: float
) -> dict:
    """Pointwise BCE in place; stops early (between batches) when the time box is spent."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    from services.reranker.training.loop import seed_everything

    seed_everything(seed, torch.get_num_threads())
    hf, tok = model.model, model.tokenizer
    hf.train()
    steps = epochs * -(-len(pairs) // batch)
    optimizer = torch.optim.AdamW(hf.parameters(), lr=lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, max(1, steps // 10), steps)
    positives = sum(p[2] for p in pairs)
    # Positives are rare (one or two units per answerable question): weigh them up to balance the classes.
    pos_weight = torch.tensor([(len(pairs) - positives) / max(positives, 1.0)])
    rng = random.Random(seed)
    started, losses, done_steps, stopped = time.monotonic(), [], 0, False
    for epoch in range(epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        total, seen = 0.0, 0
        for start in range(0, len(order), batch):
            chosen = [pairs[k] for k in order[start : start + batch]]
            features = tok(
                [q for q, _, _ in chosen],
                [t for _, t, _ in chosen],
                padding=True,
                truncation="longest_first",
                max_length=model.max_seq_length,
                return_tensors="pt",
            )
            logits = hf(**features).logits[:, 0]
            target = torch.tensor([y for _, _, y in chosen])
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, pos_weight=pos_weight)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(hf.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            total, seen, done_steps = total + loss.item() * len(chosen), seen + len(chosen), done_steps + 1
            elapsed = time.monotonic() - started
            if done_steps % 20 == 0:
                print(
                    f"epoch {epoch + 1}/{epochs} pairs {seen}/{len(pairs)} loss {total / seen:.3f} "
                    f"({done_steps * batch / elapsed:.1f} pairs/s)",
                    file=sys.stderr,
                    flush=True,
                )
            if elapsed > max_seconds:
                stopped = True
                break
        losses.append(round(total / max(seen, 1), 4))
        if stopped:
            break
    hf.eval()
    return {
        "epoch_loss": losses,
        "steps": done_steps,
        "stopped_by_time_box": stopped,
        "seconds": round(time.monotonic() - started, 1),
        "pos_weight": round(float(pos_weight), 3),
    }


def keep_layers(model, layers: int) -> None:
    """Keep the bottom `layers` transformer layers: the answer stage scores every unit of the context on the
    CPU inside a 50 ms budget, and half of MiniLM's six layers halves the cost (and the training time)."""
    encoder = model.model.base_model.encoder
    if 0 < layers < len(encoder.layer):
        encoder.layer = encoder.layer[:layers]
        model.model.config.num_hidden_layers = layers


def quantize(folder: Path) -> Path:
    """model.int8.onnx: dynamic int8, per channel, MatMul only (embeddings and the head stay fp32)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target = folder / "model.int8.onnx"
    quantize_dynamic(
        str(folder / "model.onnx"),
        str(target),
        per_channel=True,
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["MatMul"],
    )
    return target


def score_units(reader: support.SupportReader, data: Dataset, rows: list[int]) -> dict[int, np.ndarray]:
    return {i: reader.score(data.cases[i].question, [u.text for u in data.units[i]]) for i in rows}


def unit_report(data: Dataset, scores: dict[int, np.ndarray]) -> dict:
    """How well the reader separates: unit average precision, top-1 gold among answerable questions, and the
    AUC of the best unit's probability between answerable and unanswerable questions."""
    from sklearn.metrics import average_precision_score, roc_auc_score

    rows = [i for i in scores if len(scores[i])]
    y = np.concatenate([data.labels[i] for i in rows])
    p = np.concatenate([scores[i] for i in rows])
    answerable = [i for i in rows if data.cases[i].answerable and data.labels[i].any()]
    top1 = np.mean([bool(data.labels[i][int(np.argmax(scores[i]))]) for i in answerable]) if answerable else 0.0
    best = [float(scores[i].max()) for i in rows]
    is_answerable = [data.cases[i].answerable for i in rows]
    auc = roc_auc_score(is_answerable, best) if 0 < sum(is_answerable) < len(rows) else float("nan")
    return {
        "cases": len(rows),
        "unit_average_precision": round(float(average_precision_score(y, p)), 4),
        "top1_gold": round(float(top1), 4),
        "answerable_auc_of_best": round(float(auc), 4),
    }


def train(args) -> int:
    import torch

    from services.evaluation.cases import load_cases
    from services.generator.selector_training import ensure_contexts
    from services.reranker.training.loop import export_onnx, load_cross_encoder

    torch.set_num_threads(args.threads)
    cases = load_cases(args.cases, args.corpus or ["examples"])
    raw = ensure_contexts(args, cases)
    contexts = {r["id"]: r["context"] for r in map(json.loads, raw.decode().splitlines())}
    data = Dataset(cases, contexts)
    rows = {s: [i for i in data.indices(s) if len(data.units[i])] for s in ("train", "dev")}
    held_out: list[str] = []
    if args.folds:
        # A fold reader: trained without one document-grouped fold of train, so the answer decision can be
        # fitted on probabilities the reader gives questions it never saw (services/generator/reading_training.py).
        rows["train"], held = list(_folds(data, rows["train"], args.folds))[args.fold]
        held_out = [data.cases[i].case_id for i in held]
    pairs = reader_pairs(data, rows["train"], args.negatives, args.seed)
    settings = {
        "init": str(args.init),
        "max_length": args.max_length,
        "layers": args.layers,
        "epochs": args.epochs,
        "lr": args.lr,
        "batch": args.batch,
        "negatives_per_case": args.negatives,
        "seed": args.seed,
        "max_seconds": args.max_seconds,
        "fold": f"{args.fold}/{args.folds}" if args.folds else "",
    }
    digest = hashlib.sha256(json.dumps([pairs, settings]).encode()).hexdigest()[:12]
    print(
        f"{len(pairs)} pairs ({int(sum(p[2] for p in pairs))} positive) from {len(rows['train'])} train cases",
        file=sys.stderr,
    )
    model = load_cross_encoder(str(args.init), args.max_length)
    keep_layers(model, args.layers)
    history = fine_tune(model, pairs, args.epochs, args.lr, args.batch, args.seed, args.max_seconds)
    folder = Path(args.out) if args.out else support.cache_root() / args.name
    export_onnx(model, folder)
    quantize(folder)
    card = {
        "model_id": f"ragmesh-support/{args.name}",
        "model_version": digest,
        "max_length": args.max_length,
        "onnx_file": "model.onnx",
        "data": {
            "cases_file": Path(args.cases).name,
            "contexts_sha256": hashlib.sha256(raw).hexdigest(),
            "train_cases": len(rows["train"]),
            "held_out_train_cases": held_out,
            "pairs": len(pairs),
            "positive_pairs": int(sum(p[2] for p in pairs)),
            "labels": "positive = unit overlaps gold evidence; negative = other retrieved units, and every unit "
            "retrieved for an unanswerable question",
        },
        "training": {**settings, **history, "loss": "pointwise BCE (positives weighted)", "device": "cpu"},
        "trained_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (folder / support.CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
    # Serve int8 when it keeps fp32's probabilities (checked on 20 dev questions: scoring is slow on 2 CPU cores).
    probe = rows["dev"][:20]
    probe_scores = {}
    for name in ("model.onnx", "model.int8.onnx"):
        reader = support.SupportReader(folder, args.threads)
        reader.onnx_file = name
        reader.warm_up()
        probe_scores[name] = score_units(reader, data, probe)
    drift = max(
        (float(np.abs(probe_scores["model.onnx"][i] - probe_scores["model.int8.onnx"][i]).max()) for i in probe),
        default=0.0,
    )
    card["onnx_file"] = "model.int8.onnx" if drift <= 0.05 else "model.onnx"
    served = support.SupportReader(folder, args.threads)
    served.onnx_file = card["onnx_file"]
    served.warm_up()
    card["dev"] = {
        card["onnx_file"]: unit_report(data, score_units(served, data, rows["dev"])),
        "int8_max_probability_drift_on_20_questions": round(drift, 4),
    }
    (folder / support.CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps({k: card[k] for k in ("model_version", "onnx_file", "training", "dev")}, indent=2))
    print(f"support reader {card['model_id']}@{digest} written to {folder}")
    return 0


def add_parser(sub) -> None:
    from services.generator.selector_training import add_context_arguments

    p = sub.add_parser("train-support", help="fine-tune the generator's support reader (a cross-encoder)")
    add_context_arguments(p, ".ragmesh-data/train-support")
    p.add_argument("--name", default=support.DEFAULT_NAME)
    p.add_argument("--out", default="", help="model folder (default: the support cache, by --name)")
    p.add_argument("--init", default=str(DEFAULT_INIT), help="a cross-encoder or bi-encoder folder")
    p.add_argument("--max-length", type=int, default=64)
    p.add_argument("--layers", type=int, default=3, help="transformer layers kept from the init (0 = all)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--negatives", type=int, default=8, help="negatives per case")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--folds", type=int, default=0, help="with --fold: train without that fold of train")
    p.add_argument("--fold", type=int, default=0)
    p.add_argument("--max-seconds", type=float, default=600.0, help="time box for the fine-tuning")
    p.add_argument("--threads", type=int, default=2, help="torch and onnxruntime threads")
    p.set_defaults(func=train)
