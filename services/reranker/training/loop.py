"""Seeded listwise fine-tuning of a sentence-transformers `CrossEncoder`, scoring, and ONNX export.

Each step sees whole groups (one positive, its hard negatives) and minimises the softmax cross-entropy
of the positive against its group: the loss that matches how the model is used, ranking a list.
"""

import logging
import math
import random
import time
from pathlib import Path

import numpy as np

from services.reranker.training.data import Group

log = logging.getLogger("ragmesh.train")


def seed_everything(seed: int, threads: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True, warn_only=True)


def pick_device(requested: str = "auto") -> str:
    """ "cuda" when asked for or (auto) when a GPU is visible, else "cpu"."""
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def load_cross_encoder(init: str, max_length: int, device: str = "cpu"):
    """A CrossEncoder from a model folder or hub name; a bi-encoder folder gets a fresh 1-logit head."""
    from sentence_transformers import CrossEncoder

    return CrossEncoder(init, num_labels=1, max_length=max_length, device=device)


def _autocast(device: str):
    """bf16 autocast on a GPU (weights stay fp32, so the exported model is the same kind); none on CPU."""
    import contextlib

    import torch

    return torch.autocast("cuda", dtype=torch.bfloat16) if device.startswith("cuda") else contextlib.nullcontext()


def train_groups(
    model, groups: list[Group], epochs: int, lr: float, groups_per_step: int, seed: int, progress=None
) -> list[float]:
    """Fine-tune in place; returns the mean loss of each epoch."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    hf = model.model
    device = str(model.device)
    hf.train()
    steps = epochs * math.ceil(len(groups) / groups_per_step)
    optimizer = torch.optim.AdamW(hf.parameters(), lr=lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, max(1, steps // 10), steps)
    rng = random.Random(seed)
    size = len(groups[0].passages)
    target = torch.zeros(groups_per_step, dtype=torch.long, device=device)
    losses, started, done = [], time.monotonic(), 0
    for epoch in range(epochs):
        order = list(range(len(groups)))
        rng.shuffle(order)
        total = 0.0
        for start in range(0, len(order), groups_per_step):
            batch = [groups[i] for i in order[start : start + groups_per_step]]
            queries = [g.query for g in batch for _ in range(size)]
            passages = [p for g in batch for p in g.passages]
            features = pair_features(model, queries, passages).to(device)
            with _autocast(device):
                logits = hf(**features).logits.view(len(batch), size)
            loss = torch.nn.functional.cross_entropy(logits.float(), target[: len(batch)])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(hf.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            total += loss.item() * len(batch)
            done += len(passages)
            if progress and (start // groups_per_step) % 50 == 0:
                progress(
                    f"epoch {epoch + 1}/{epochs} group {start}/{len(groups)} loss {loss.item():.3f} "
                    f"({done / (time.monotonic() - started):.1f} pairs/s)"
                )
        losses.append(total / len(groups))
    hf.eval()
    return losses


def pair_features(model, queries: list[str], passages: list[str]):
    """The tokenised (query, passage) pairs as the cross-encoder reads them: its window, longest side cut first."""
    return model.tokenizer(
        queries,
        passages,
        padding=True,
        truncation="longest_first",
        max_length=model.max_seq_length,
        return_tensors="pt",
    )


def score_pairs(model, query: str, passages: list[str], batch_size: int = 64) -> np.ndarray:
    import torch

    hf = model.model
    device = str(model.device)
    out = []
    with torch.inference_mode():
        for i in range(0, len(passages), batch_size):
            chunk = passages[i : i + batch_size]
            features = pair_features(model, [query] * len(chunk), chunk).to(device)
            out.append(hf(**features).logits[:, 0].float().cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


def export_onnx(model, folder: Path) -> Path:
    """model.onnx (input_ids, attention_mask, token_type_ids -> logits [batch, 1]) and tokenizer.json."""
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    hf, tok = model.model.cpu().eval(), model.tokenizer
    sample = tok(["query"], ["passage"], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    path = folder / "model.onnx"
    torch.onnx.export(
        hf,
        tuple(sample[n] for n in names),
        str(path),
        input_names=names,
        output_names=["logits"],
        dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in names}, "logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    tok.backend_tokenizer.save(str(folder / "tokenizer.json"))
    return path
