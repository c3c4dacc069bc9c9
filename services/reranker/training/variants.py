"""How the trained cross-encoder runs on a CPU: measured variants, the choice, and the card that records it.

A variant is a model file (fp32, or an int8 quantisation: quantize.py), a window (max tokens per pair), a
number of candidates (the head of the fused list it rescores; the tail keeps its first-stage order), intra-op
threads and ONNX Runtime's graph optimisation level. Each is measured on held-out queries, never the ones it
was trained or tuned on when labels allow: `mined-dev.jsonl` (the SciFact dev portion, the `--exclude-queries`),
else `mined-tune.jsonl` (a corpus-trained model has no labelled dev set; its tuning split is what is held out).

- quality: nDCG@10 after fusing the cross-encoder's ranks with the first stage's at the card's weight, as the
  service does; when the card's weight is 0 (no tuning gain) that figure cannot move, so the choice reads the
  cross-encoder's own ranking (nDCG@10 with the cross-encoder alone) instead.
- speed: p50/p95 of one rerank (tokenising, ONNX Runtime, fusion) per held-out query, in this process.

The chosen variant is the fastest one whose quality is within `tolerance` of the full model (fp32, the trained
window, 50 candidates) and whose p95 is within the budget; the card's `serving` block records it, the figures
it was chosen on, the machine's load while measuring, and the training data's hash.

    python -m services.reranker.training.variants --name sample
"""

import argparse
import dataclasses
import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from services.evaluation.metrics import ndcg_at
from services.reranker import fusion
from services.reranker.cross_encoder import CARD_FILE, OnnxScorer
from services.reranker.training import quantize
from services.reranker.training.data import Query, load_queries

DEV_FILE = "mined-dev.jsonl"
TUNE_FILE = "mined-tune.jsonl"
BUDGET_MS = 300.0
TOLERANCE = 0.005
FULL_CANDIDATES = 50


@dataclasses.dataclass(frozen=True)
class Config:
    variant: str  # "fp32" or an int8 variant's name (quantize.VARIANTS)
    max_length: int
    candidates: int = FULL_CANDIDATES
    threads: int = 2
    optimization: str = "all"

    @property
    def label(self) -> str:
        return f"{self.variant}@{self.max_length} top{self.candidates} t{self.threads} {self.optimization}"


@dataclasses.dataclass
class Measured:
    config: Config
    ndcg: float  # after fusion at the card's weight
    ce_ndcg: float  # the cross-encoder's ranking alone
    p50_ms: float
    p95_ms: float
    cpu_p50_ms: float  # process CPU time (all threads) per rerank: the work, whatever else shares the cores
    cpu_p95_ms: float
    timed_queries: int
    load: float  # 1-minute load average while it was timed

    def as_dict(self) -> dict:
        return {**dataclasses.asdict(self), "label": self.config.label, "idle_p95_ms": self.idle_p95_ms}

    @classmethod
    def from_dict(cls, row: dict) -> "Measured":
        fields = {f.name for f in dataclasses.fields(cls)} - {"config"}
        return cls(Config(**row["config"]), **{k: v for k, v in row.items() if k in fields})

    @property
    def idle_p95_ms(self) -> float:
        """p95 as the machine would see it with nothing else running: the CPU time spread over the intra-op
        threads (an upper bound: a thread spinning while its peer waits for a core counts too)."""
        return self.cpu_p95_ms / self.config.threads


def held_out(model_dir: Path) -> tuple[str, list[Query]]:
    """(which split, its queries with their first-stage candidates)."""
    for name, split in ((DEV_FILE, "dev"), (TUNE_FILE, "tune")):
        path = model_dir / name
        if path.is_file() and path.stat().st_size:
            return split, [q for q in load_queries(path) if q.candidates]
    raise SystemExit(f"{model_dir}: neither {DEV_FILE} nor {TUNE_FILE} holds queries; train the model first")


def data_hash(model_dir: Path) -> str:
    """sha256 (first 12 hex) over the mined files the model was trained and tuned on."""
    digest = hashlib.sha256()
    for name in ("mined-train.jsonl", "mined-self.jsonl", TUNE_FILE):
        path = model_dir / name
        digest.update(name.encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def query_ndcg(q: Query, scores: np.ndarray, candidates: int, weight: float) -> float:
    """nDCG@10 of one query when its first `candidates` are reordered by fusion and the rest keep their order."""
    head = q.candidates[:candidates]
    order = fusion.fused_order([c.first_rank for c in head], scores[: len(head)], weight)
    ranked = [head[i].doc_id for i in order] + [c.doc_id for c in q.candidates[candidates:]]
    return ndcg_at({doc: pos for pos, doc in enumerate(ranked, start=1)}, q.gains, 10)


def quality(
    queries: list[Query], scores: list[np.ndarray], candidates: int, weight: float
) -> tuple[list[float], list[float]]:
    """Per-query nDCG@10 after fusion at `weight`, and with the cross-encoder alone."""
    fused = [query_ndcg(q, s, candidates, weight) for q, s in zip(queries, scores, strict=True)]
    alone = [query_ndcg(q, s, candidates, fusion.RERANKER_ONLY) for q, s in zip(queries, scores, strict=True)]
    return fused, alone


Timings = list[tuple[float, float]]  # (wall seconds, process CPU seconds) per rerank


def timed_scores(scorer: OnnxScorer, queries: Iterable[Query], candidates: int) -> tuple[list[np.ndarray], Timings]:
    """Each query's scores for its first `candidates` and what its rerank (score + fusion) took."""
    out, timings = [], []
    for q in queries:
        head = q.candidates[:candidates]
        start, cpu = time.perf_counter(), time.process_time()
        scores = scorer.score(q.text, [c.text for c in head])
        fusion.fused_order([c.first_rank for c in head], scores, scorer.weight)
        timings.append((time.perf_counter() - start, time.process_time() - cpu))
        out.append(scores)
    return out, timings


def _percentiles(seconds: list[float]) -> tuple[float, float]:
    return 1000 * statistics.median(seconds), 1000 * float(np.percentile(seconds, 95))


def study(
    model_dir: Path,
    configs: list[Config],
    timed_queries: int = 0,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, list[Measured]]:
    """Measures every config. Scores depend only on (variant, window), so each pair is scored once over all
    held-out queries at 50 candidates (and timed there); a config with fewer candidates, other threads or
    another optimisation level reuses those scores and is timed on the first `timed_queries` (0: all)."""
    split, queries = held_out(model_dir)
    timed = queries[:timed_queries] if timed_queries else queries
    scored: dict[tuple[str, int], list[np.ndarray]] = {}
    out = []
    for config in configs:
        key = (config.variant, config.max_length)
        scorer = OnnxScorer(model_dir, config.threads, config.variant, config.max_length, config.optimization)
        scorer.warm_up()
        scorer.score(queries[0].text, [c.text for c in queries[0].candidates[: config.candidates]])  # first call
        load = os.getloadavg()[0]
        if key not in scored:
            scored[key], timings = timed_scores(scorer, queries, FULL_CANDIDATES)
            if config.candidates != FULL_CANDIDATES or config.threads != 2 or config.optimization != "all":
                timings = timed_scores(scorer, timed, config.candidates)[1]
        else:
            timings = timed_scores(scorer, timed, config.candidates)[1]
        fused, alone = quality(queries, scored[key], config.candidates, scorer.weight)
        p50, p95 = _percentiles([wall for wall, _ in timings])
        cpu50, cpu95 = _percentiles([cpu for _, cpu in timings])
        result = Measured(
            config,
            float(np.mean(fused)),
            float(np.mean(alone)),
            p50,
            p95,
            cpu50,
            cpu95,
            len(timings),
            round((load + os.getloadavg()[0]) / 2, 1),
        )
        out.append(result)
        if progress:
            progress(
                f"{config.label}: nDCG@10 {result.ndcg:.4f} (alone {result.ce_ndcg:.4f}), "
                f"p50 {p50:.0f} ms p95 {p95:.0f} ms (idle estimate p95 {result.idle_p95_ms:.0f} ms), "
                f"load {result.load}"
            )
    return split, out


def student_configs(model_dir: Path, trained_length: int) -> list[Config]:
    """Distilled students found next to the model (distill.py writes model.student<N>.onnx)."""
    names = sorted(p.name[len("model.") : -len(".onnx")] for p in model_dir.glob("model.student*.onnx"))
    return [Config(name, trained_length, candidates=n) for name in names for n in (FULL_CANDIDATES, 30, 20)]


def default_configs(trained_length: int) -> list[Config]:
    """The full model first (the reference), then each lever alone, then the levers together. Scoring every
    held-out query is what costs (one pass per file and window), so other windows are tried with the shipped
    int8 file only; candidates, threads and graph optimisation reuse a pass's scores and are only timed."""
    others = [w for w in (64, 128, 256, 384) if trained_length / 3 <= w <= 2 * trained_length and w != trained_length]
    shorter = [w for w in others if w < trained_length]
    int8 = quantize.SHIPPED.name
    configs = [Config("fp32", trained_length)]
    configs += [Config("fp32", trained_length, optimization=level) for level in ("basic", "extended")]
    configs += [Config("fp32", trained_length, threads=1)]
    configs += [Config("fp32", trained_length, candidates=n) for n in (20, 30)]
    configs += [Config(v.name, trained_length) for v in quantize.VARIANTS]
    configs += [Config(int8, w) for w in others]
    configs += [Config(int8, w, candidates=n) for w in (trained_length, *shorter) for n in (20, 30)]
    return configs


def choose(results: list[Measured], weight: float, budget_ms: float = BUDGET_MS, tolerance: float = TOLERANCE):
    """(the chosen Measured or None, the quality figure compared). Only configurations with the default
    threads and optimisation level are candidates (those are settings of the service, not of the model), and
    one that rescores every candidate wins over one that drops some (that also changes what can be found)."""
    figure = "ndcg" if weight > 0 else "ce_ndcg"
    full = results[0]
    eligible = [
        r
        for r in results
        if r.config.threads == full.config.threads
        and r.config.optimization == full.config.optimization
        and getattr(r, figure) >= getattr(full, figure) - tolerance
        and r.idle_p95_ms <= budget_ms
    ]
    whole = [r for r in eligible if r.config.candidates == full.config.candidates]
    return (min(whole or eligible, key=lambda r: r.idle_p95_ms) if eligible else None), figure


def ship(model_dir: Path, split: str, results: list[Measured], budget_ms: float = BUDGET_MS) -> dict:
    """Writes the card's `serving` block (the chosen variant, or fp32 when none meets the goal) and the study."""
    card = json.loads((model_dir / CARD_FILE).read_text())
    weight = float(card["fusion"].get("weight", 0.0)) if card.get("enabled") else 0.0
    chosen, figure = choose(results, weight, budget_ms)
    full = results[0]
    pick = chosen or full
    card["serving"] = {
        "variant": pick.config.variant,
        "file": "model.onnx" if pick.config.variant == "fp32" else f"model.{pick.config.variant}.onnx",
        "max_length": pick.config.max_length,
        # 0 = the service's setting: a variant that keeps every candidate does not cap them.
        "candidates": 0 if pick.config.candidates == full.config.candidates else pick.config.candidates,
        "meets_goal": chosen is not None,
        "goal": f"p95 <= {budget_ms:g} ms (CPU time / threads) and {figure} within {TOLERANCE} of the full model",
        "measured_on": f"{split} ({len(held_out(model_dir)[1])} queries)",
        "compared_figure": figure,
        "training_data_sha256": data_hash(model_dir),
        "dev_ndcg@10": round(pick.ndcg, 4),
        "dev_ce_ndcg@10": round(pick.ce_ndcg, 4),
        "full_dev_ndcg@10": round(full.ndcg, 4),
        "full_dev_ce_ndcg@10": round(full.ce_ndcg, 4),
        "p50_ms": round(pick.p50_ms, 1),
        "p95_ms": round(pick.p95_ms, 1),
        "idle_p95_ms": round(pick.idle_p95_ms, 1),
        "full_p95_ms": round(full.p95_ms, 1),
        "full_idle_p95_ms": round(full.idle_p95_ms, 1),
        "load_average": pick.load,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "study": [r.as_dict() for r in results],
    }
    (model_dir / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
    _append_model_card(model_dir, card["serving"], results)
    return card["serving"]


def table(results: list[Measured]) -> list[str]:
    full = results[0]
    lines = [
        "| variant | window | candidates | threads | graph opt | nDCG@10 fused | Δ | nDCG@10 alone | Δ "
        "| p50 ms | p95 ms | CPU p95 ms | idle p95 ms | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.config
        lines.append(
            f"| {c.variant} | {c.max_length} | {c.candidates} | {c.threads} | {c.optimization} | {r.ndcg:.4f} | "
            f"{r.ndcg - full.ndcg:+.4f} | {r.ce_ndcg:.4f} | {r.ce_ndcg - full.ce_ndcg:+.4f} | {r.p50_ms:.0f} | "
            f"{r.p95_ms:.0f} | {r.cpu_p95_ms:.0f} | {r.idle_p95_ms:.0f} | {r.load} |"
        )
    return lines


def _append_model_card(model_dir: Path, serving: dict, results: list[Measured]) -> None:
    path = model_dir / "MODEL_CARD.md"
    text = path.read_text() if path.is_file() else ""
    text = text.split("\n## Serving on a CPU", 1)[0].rstrip("\n") + "\n"
    verdict = "meets the goal" if serving["meets_goal"] else "no variant met the goal; the fp32 model is served"
    lines = [
        "",
        "## Serving on a CPU",
        "",
        f"Served variant: **{serving['variant']}** (`{serving['file']}`), window {serving['max_length']}, "
        f"{serving['candidates'] or 'all'} candidates: {verdict} ({serving['goal']}). "
        f"Measured on the {serving['measured_on']}, "
        f"in-process ONNX Runtime; training data sha256 {serving['training_data_sha256']}; "
        f"dev nDCG@10 {serving['dev_ndcg@10']} (full model {serving['full_dev_ndcg@10']}), "
        f"alone {serving['dev_ce_ndcg@10']} (full {serving['full_dev_ce_ndcg@10']}); "
        f"p95 {serving['idle_p95_ms']} ms as CPU time / threads (full {serving['full_idle_p95_ms']} ms); wall p95 "
        f"{serving['p95_ms']} ms at load {serving['load_average']} on 2 cores shared with other work. "
        "RAGMESH_RERANKER_CROSS_ENCODER_VARIANT=fp32 serves the full model.",
        "",
        *table(results),
    ]
    path.write_text(text + "\n".join(lines) + "\n")


def make_variants(model_dir: Path) -> list[Path]:
    """Every int8 variant's file next to model.onnx (written once; the fp32 file is never touched)."""
    out = []
    for variant in quantize.VARIANTS:
        path = model_dir / variant.file_name
        if not path.is_file() or path.stat().st_mtime < (model_dir / quantize.FP32_FILE).stat().st_mtime:
            path = quantize.quantize(model_dir, variant)
        out.append(path)
    return out


def _say(message: str) -> None:
    print(f"[variants {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run(
    model_dir: Path, timed_queries: int = 0, configs: list[Config] | None = None, students_only: bool = False
) -> dict:
    """Quantise, measure, choose, write the card (and reinstall the Triton model with the new card; Triton
    itself serves the fp32 model, see command.install_into_triton).
    `students_only`: measure only the distilled students and choose among them and the card's earlier study."""
    from services.reranker.training.command import install_into_triton

    make_variants(model_dir)
    card = json.loads((model_dir / CARD_FILE).read_text())
    trained = int(card["max_length"])
    earlier = [Measured.from_dict(r) for r in card.get("serving", {}).get("study", [])] if students_only else []
    if students_only and not earlier:
        raise SystemExit(f"{model_dir}: --students-only needs an earlier study in the card")
    wanted = configs or (student_configs(model_dir, trained) if students_only else default_configs(trained))
    if not students_only:
        wanted += [c for c in student_configs(model_dir, trained) if c not in wanted]
    split, results = study(model_dir, wanted, timed_queries, _say)
    results = earlier + results
    serving = ship(model_dir, split, results)
    if (model_dir / "triton").is_dir():
        install_into_triton(model_dir, model_dir / "triton")
    print("\n".join(table(results)))
    return serving


def main(argv: list[str] | None = None) -> int:
    from services.reranker.triton_server import rerankers_root

    parser = argparse.ArgumentParser(prog="python -m services.reranker.training.variants", description=__doc__)
    parser.add_argument("--name", default="sample", help="a trained model's name in the cache")
    parser.add_argument("--model-dir", help="a trained model's folder (instead of --name)")
    parser.add_argument("--timed-queries", type=int, default=0, help="queries timed per extra config (0: all)")
    parser.add_argument("--if-missing", action="store_true", help="do nothing when the card has a serving block")
    parser.add_argument(
        "--students-only",
        action="store_true",
        help="measure only the distilled students (distill.py) and choose among them and the card's earlier study",
    )
    args = parser.parse_args(argv)
    model_dir = Path(args.model_dir) if args.model_dir else rerankers_root() / args.name
    if args.if_missing and "serving" in json.loads((model_dir / CARD_FILE).read_text()):
        _say(f"{model_dir}: serving variant already chosen")
        return 0
    serving = run(model_dir, args.timed_queries, students_only=args.students_only)
    _say(f"serving {serving['variant']} window {serving['max_length']} (meets goal: {serving['meets_goal']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
