"""Embedder benchmark: passages/s and per-query latency for each model, against the raw runtime.

For each model it embeds the same passages (SciFact abstracts when ../shared/data/scifact is there,
else synthetic text) through the ragmesh embedder (tokenise, length-sorted batches, pool, normalise),
then times the runtime alone on the same batches: onnxruntime's session.run for the ONNX models,
the sentence-transformers forward pass (torch) for MiniLM. Queries are embedded one at a time (p50/p95).
For ONNX models it also times arrival-order batches, to show what length sorting saves.

    python -m loadtest.bench_embed --passages 128 --queries 40 --threads 2
"""

import argparse
import json
import os
import statistics
import time

import numpy as np

from loadtest.figures import figure, record
from shared.embedding import OnnxEmbedder, build_embedder
from shared.embedding.registry import MINILM

DEFAULT_MODELS = [
    MINILM,
    "BAAI/bge-small-en-v1.5",
    "BAAI/bge-small-en-v1.5-q",
    "intfloat/e5-small-v2",
    "intfloat/e5-small-v2-q",
]
SCIFACT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "data", "scifact")


def load_texts(data: str, passages: int, queries: int) -> tuple[list[str], list[str]]:
    corpus, qfile = os.path.join(data, "corpus.jsonl"), os.path.join(data, "queries.jsonl")
    if os.path.exists(corpus) and os.path.exists(qfile):
        with open(corpus) as fh:
            docs = [json.loads(line) for _, line in zip(range(passages), fh, strict=False)]
        with open(qfile) as fh:
            qs = [json.loads(line)["text"] for _, line in zip(range(queries), fh, strict=False)]
        return [f"{d.get('title', '')}\n{d['text']}" for d in docs], qs
    rng = np.random.default_rng(0)
    words = "cell protein gene patient risk study effect dose trial tumour immune brain blood level".split()
    texts = [" ".join(rng.choice(words, size=int(rng.integers(20, 300)))) for _ in range(passages)]
    return texts, [" ".join(rng.choice(words, size=8)) for _ in range(queries)]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_onnx(embedder: OnnxEmbedder, passages: list[str], queries: list[str]) -> dict:
    prefixed = [embedder.spec.passage_prefix + p for p in passages]
    ids = embedder.tokenize(prefixed)
    sorted_feeds = [embedder.feeds([ids[i] for i in g]) for g in embedder.batches(ids)]
    arrival = [list(range(i, min(i + embedder.batch_size, len(ids)))) for i in range(0, len(ids), embedder.batch_size)]
    arrival_feeds = [embedder.feeds([ids[i] for i in g]) for g in arrival]
    query_feeds = [embedder.feeds(embedder.tokenize([embedder.spec.query_prefix + q])) for q in queries]
    return {
        "raw": timed(lambda: [embedder.run(f) for f in sorted_feeds]),
        "unsorted": timed(lambda: [embedder.run(f) for f in arrival_feeds]),
        "raw_query_ms": [1000 * timed(lambda f=f: embedder.run(f)) for f in query_feeds],
        "tokens": float(np.mean([len(r) for r in ids])),
    }


def bench_torch(embedder, passages: list[str], queries: list[str]) -> dict:
    import torch

    model = embedder._model
    order = sorted(range(len(passages)), key=lambda i: -len(passages[i]))  # as sentence-transformers sorts
    size = embedder.batch_size
    batches = [[passages[i] for i in order[s : s + size]] for s in range(0, len(order), size)]
    tokenize = getattr(model, "preprocess", None) or model.tokenize
    features = [tokenize(b) for b in batches]
    query_features = [tokenize([embedder.spec.query_prefix + q]) for q in queries]

    def forward(f):
        with torch.inference_mode():
            model.forward(dict(f))

    return {
        "raw": timed(lambda: [forward(f) for f in features]),
        "unsorted": None,
        "raw_query_ms": [1000 * timed(lambda f=f: forward(f)) for f in query_features],
        "tokens": float(np.mean([int(f["attention_mask"].sum()) / len(f["attention_mask"]) for f in features])),
    }


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS))
    parser.add_argument("--passages", type=int, default=128)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", default=SCIFACT)
    args = parser.parse_args()
    passages, queries = load_texts(args.data, args.passages, args.queries)
    print(
        f"{len(passages)} passages, {len(queries)} queries, {args.threads} threads, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    rows = []
    for name in [m for m in args.models.split(",") if m]:
        embedder = build_embedder(name, threads=args.threads)
        load_s = timed(embedder.warm_up)
        embedder.embed_passages(passages[:8])
        embedder.embed_queries(queries[:3])
        full = timed(lambda e=embedder: e.embed_passages(passages))
        query_ms = [1000 * timed(lambda q=q, e=embedder: e.embed_queries([q])) for q in queries]
        raw = (
            bench_onnx(embedder, passages, queries)
            if isinstance(embedder, OnnxEmbedder)
            else bench_torch(embedder, passages, queries)
        )
        runtime = "onnxruntime" if isinstance(embedder, OnnxEmbedder) else "torch"
        rows.append(
            {
                "model": embedder.spec.model_id,
                "runtime": runtime,
                "load_s": load_s,
                "tokens": raw["tokens"],
                "pps": len(passages) / full,
                "raw_pps": len(passages) / raw["raw"],
                "unsorted_pps": len(passages) / raw["unsorted"] if raw["unsorted"] else None,
                "q50": statistics.median(query_ms),
                "q95": pct(query_ms, 95),
                "raw_q50": statistics.median(raw["raw_query_ms"]),
            }
        )
        print(f"  {name}: done", flush=True)
    header = (
        f"{'model':<28} {'runtime':<11} {'load s':>6} {'tok/psg':>7} {'psg/s':>7} {'raw psg/s':>9} "
        f"{'unsorted':>8} {'q p50 ms':>8} {'q p95 ms':>8} {'raw q p50':>9}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        unsorted = f"{r['unsorted_pps']:8.1f}" if r["unsorted_pps"] else f"{'-':>8}"
        print(
            f"{r['model']:<28} {r['runtime']:<11} {r['load_s']:6.1f} {r['tokens']:7.0f} {r['pps']:7.1f} "
            f"{r['raw_pps']:9.1f} {unsorted} {r['q50']:8.1f} {r['q95']:8.1f} {r['raw_q50']:9.1f}"
        )
    figures = []
    for r in rows:
        config = {"bench": "embed", "model": r["model"], "runtime": r["runtime"], "threads": args.threads}
        figures += [
            figure("embed.passages_per_s", r["pps"], "passages/s", **config, passages=len(passages)),
            figure("embed.raw_passages_per_s", r["raw_pps"], "passages/s", **config, passages=len(passages)),
            figure("embed.query_p50", r["q50"], "ms", **config, queries=len(queries)),
            figure("embed.query_p95", r["q95"], "ms", **config, queries=len(queries)),
            figure("embed.load", r["load_s"], "s", **config),
        ]
    print(f"figures: {record(figures)}")
    print(
        "psg/s: through the ragmesh embedder (tokenise, batch, run, pool, normalise); raw: the runtime alone on the "
        "same length-sorted batches; unsorted: the runtime on arrival-order batches of the same size."
    )


if __name__ == "__main__":
    main()
