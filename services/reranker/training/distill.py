"""A smaller student of the trained cross-encoder: its first N transformer layers (and its classifier head),
trained to reproduce the teacher's logits on the teacher's own training queries' candidates (never the
held-out ones). Exported next to the teacher as `model.student<N>.onnx`, so it is one more variant that
variants.py measures and the card can choose (`RAGMESH_RERANKER_CROSS_ENCODER_VARIANT=student<N>`).

    python -m services.reranker.training.distill --name sample --layers 2
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

from services.reranker.cross_encoder import CARD_FILE, OnnxScorer
from services.reranker.training import loop
from services.reranker.training.data import load_queries

TRAIN_FILES = ("mined-train.jsonl", "mined-self.jsonl")


def _say(message: str) -> None:
    print(f"[distill {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def teacher_pairs(model_dir: Path, candidates: int, threads: int) -> list[tuple[str, list[str], np.ndarray]]:
    """(query, passages, the fp32 teacher's logits) for every training query's first `candidates`."""
    teacher = OnnxScorer(model_dir, threads, "fp32")
    teacher.warm_up()
    out = []
    queries = [q for name in TRAIN_FILES if (model_dir / name).is_file() for q in load_queries(model_dir / name)]
    for n, q in enumerate(queries, start=1):
        passages = [c.text for c in q.candidates[:candidates]]
        if len(passages) >= 2:
            out.append((q.text, passages, teacher.score(q.text, passages)))
        if n % 25 == 0 or n == len(queries):
            _say(f"teacher scored {n}/{len(queries)} queries")
    return out


def truncated(checkpoint: Path, layers: int, max_length: int):
    """The teacher's CrossEncoder with only its first `layers` encoder layers (embeddings and head kept)."""
    model = loop.load_cross_encoder(str(checkpoint), max_length)
    encoder = model.model.base_model.encoder
    encoder.layer = encoder.layer[:layers]
    model.model.config.num_hidden_layers = layers
    return model


def train(model, pairs, epochs: int, lr: float, seed: int) -> list[float]:
    """Mean-squared error between the student's and the teacher's logits, one query's candidates per step."""
    import torch

    hf = model.model
    hf.train()
    optimizer = torch.optim.AdamW(hf.parameters(), lr=lr, weight_decay=0.01)
    rng = random.Random(seed)
    losses = []
    for epoch in range(epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        total = 0.0
        for step, i in enumerate(order):
            query, passages, target = pairs[i]
            features = loop.pair_features(model, [query] * len(passages), passages)
            logits = hf(**features).logits[:, 0]
            loss = torch.nn.functional.mse_loss(logits, torch.from_numpy(target))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(hf.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
            total += loss.item()
            if step % 25 == 0:
                _say(f"epoch {epoch + 1}/{epochs} query {step}/{len(pairs)} mse {loss.item():.3f}")
        losses.append(total / len(pairs))
    hf.eval()
    return losses


def run(model_dir: Path, layers: int, candidates: int, epochs: int, lr: float, seed: int, threads: int) -> Path:
    loop.seed_everything(seed, threads)
    card = json.loads((model_dir / CARD_FILE).read_text())
    pairs = teacher_pairs(model_dir, candidates, threads)
    student = truncated(model_dir / "checkpoint", layers, int(card["max_length"]))
    _say(f"student: {layers} of the teacher's layers, {len(pairs)} queries x up to {candidates} candidates")
    started = time.monotonic()
    losses = train(student, pairs, epochs, lr, seed)
    name = f"student{layers}"
    folder = model_dir / name
    student.save_pretrained(str(folder))
    exported = loop.export_onnx(student, folder)
    target = model_dir / f"model.{name}.onnx"
    exported.replace(target)
    (folder / "distill.json").write_text(
        json.dumps(
            {
                "layers": layers,
                "queries": len(pairs),
                "candidates": candidates,
                "epochs": epochs,
                "lr": lr,
                "seed": seed,
                "loss": "mse on the fp32 teacher's logits",
                "mse": [round(x, 4) for x in losses],
                "seconds": round(time.monotonic() - started),
                "teacher_version": card["model_version"],
            },
            indent=2,
        )
        + "\n"
    )
    _say(f"{target} written (mse per epoch {[round(x, 3) for x in losses]})")
    return target


def main(argv: list[str] | None = None) -> int:
    from services.reranker.triton_server import rerankers_root

    parser = argparse.ArgumentParser(prog="python -m services.reranker.training.distill", description=__doc__)
    parser.add_argument("--name", default="sample")
    parser.add_argument("--model-dir", help="a trained model's folder (instead of --name)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--candidates", type=int, default=20, help="first-stage candidates per training query")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    model_dir = Path(args.model_dir) if args.model_dir else rerankers_root() / args.name
    run(model_dir, args.layers, args.candidates, args.epochs, args.lr, args.seed, args.threads)
    return 0


if __name__ == "__main__":
    sys.exit(main())
