"""Reranker benchmark: the service's throughput against the model's raw throughput on the same batches.

Batches are real: each is one tuning query of the trained model with its first-stage candidates
(mined-tune.jsonl in the model's folder), `--candidates` passages per request (default 50). Four ways:
  raw         ONNX Runtime in-process on the tokenised batch (the model alone);
  in_process  the same scorer tokenising too (the embedded default's path);
  triton      tritonclient gRPC straight to tritonserver (serving + the python backend's tokenising);
  service     the ragmesh reranker over gRPC (protobuf candidates, Triton call, fusion, and the maxsim signal
              when the model's card fuses it), as the gateway calls it.
triton/raw is the cost of serving the model; service/raw adds the service (and maxsim, when fused).
Prints a table and writes JSON to --out.

With `--gpu` (a host with CUDA): raw is the checkpoint in fp16 on the GPU with torch, what Triton's GPU
instance runs (model.py); in_process (ONNX Runtime on the CPU) is left out; Triton serves a repository made
for the run with the checkpoint (install_into_triton's with_torch), so model.onnx is not needed there, and
the run stops if Triton's log does not say the model runs on CUDA.

Then the CPU trade-off curve (services/reranker/training/variants.py): int8 quantisations, windows, candidates,
threads and graph optimisation, each with p50/p95 of a rerank and nDCG@10 on the model's held-out queries
(the SciFact dev portion for a SciFact model); `--tradeoff-queries` bounds how many queries the timing-only
configurations are timed on. Every figure also goes to loadtest/out/bench.json.

    python -m loadtest.bench_rerank --name sample --requests 20
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import grpc
import numpy as np

from loadtest.figures import figure, record
from services.chunker.chunking import stable_id
from services.cli.mesh import ROOT_DIR, free_port
from services.reranker.cross_encoder import (
    CARD_FILE,
    OnnxScorer,
    TritonScorer,
    served_version,
    serving_variant,
)
from services.reranker.training import variants
from services.reranker.training.command import install_into_triton
from services.reranker.training.data import load_queries
from services.reranker.triton_server import TritonServer, rerankers_root
from shared import convert
from shared.model import Chunk, DocumentMeta, ScoredChunk, StageScores
from shared.pairs import pair_feeds, pair_tokenizer
from shared.stubs import reranker_pb2, reranker_pb2_grpc


def batches(model_dir: Path, requests: int, candidates: int) -> list[tuple[str, list[str]]]:
    queries = load_queries(model_dir / "mined-tune.jsonl")
    out = [(q.text, [c.text for c in q.candidates[:candidates]]) for q in queries if len(q.candidates) >= candidates]
    if not out:
        raise SystemExit(f"{model_dir}/mined-tune.jsonl has no query with {candidates} candidates")
    return (out * (requests // len(out) + 1))[:requests]


def as_request(query: str, passages: list[str]) -> reranker_pb2.RerankRequest:
    meta = DocumentMeta(tenant_id="bench", document_id="bench")
    # Ids derived from the text, as the chunker's are: the maxsim signal caches sentence vectors by chunk id.
    chunks = [
        ScoredChunk(Chunk(stable_id(p), meta, [], p, p, 0, len(p), "", 0, i), StageScores(fused_rank=i + 1))
        for i, p in enumerate(passages)
    ]
    return reranker_pb2.RerankRequest(
        query=query, candidates=[convert.scored_to_pb(c) for c in chunks], top_n=len(passages)
    )


class TorchCudaScorer:
    """The trained checkpoint in fp16 on the GPU, as Triton's GPU instance runs it (model.py's torch path)."""

    def __init__(self, model_dir: Path):
        self.model_dir = model_dir
        card = json.loads((model_dir / CARD_FILE).read_text())
        self.model_id = card["model_id"]
        self.model_version = served_version(card, serving_variant(card, "fp32"))
        self.max_length = int(card.get("max_length", 128))
        self._model, self._tokenizer, self._device = None, None, None

    def warm_up(self) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification

        if not torch.cuda.is_available():
            raise SystemExit("--gpu: torch sees no CUDA device")
        self._device = torch.device("cuda", 0)
        checkpoint = str(self.model_dir / "checkpoint")
        self._model = AutoModelForSequenceClassification.from_pretrained(checkpoint).half().to(self._device).eval()
        self._tokenizer = pair_tokenizer(self.model_dir / "tokenizer.json", self.max_length)

    def feeds(self, query: str, passages: list[str]) -> dict[str, np.ndarray]:
        return pair_feeds(self._tokenizer, query, passages)

    def run(self, feeds: dict[str, np.ndarray]) -> np.ndarray:
        import torch

        with torch.inference_mode():
            tensors = {k: torch.from_numpy(v).to(self._device) for k, v in feeds.items()}
            return self._model(**tensors).logits[:, 0].float().cpu().numpy()  # .cpu() waits for the GPU


def measure(fn, work: list) -> dict:
    fn(*work[0])  # warm-up (first-call allocation, connection)
    seconds = []
    for item in work:
        start = time.perf_counter()
        fn(*item)
        seconds.append(time.perf_counter() - start)
    pairs = sum(len(p) for _, p in work)
    return {
        "pairs_per_s": pairs / sum(seconds),
        "p50_ms": 1000 * statistics.median(seconds),
        "p95_ms": 1000 * float(np.percentile(seconds, 95)),
        "requests": len(work),
    }


def tradeoff(model_dir: Path, timed_queries: int, from_card: bool = False) -> None:
    """Measures the variants (the int8 files are written next to the fp32 one when missing), prints the table
    and records each figure; the card's `serving` block says which one is served. `from_card`: the study the
    card was chosen on (variants.py), printed and recorded without measuring again."""
    card = json.loads((model_dir / CARD_FILE).read_text())
    served = card.get("serving", {})
    if from_card:
        if "study" not in served:
            raise SystemExit(f"{model_dir}: the card holds no study; run without --tradeoff-from-card")
        split = served["measured_on"].split(" ")[0]
        results = [variants.Measured.from_dict(row) for row in served["study"]]
    else:
        variants.make_variants(model_dir)
        split, results = variants.study(
            model_dir, variants.default_configs(int(card["max_length"])), timed_queries, lambda m: print(m, flush=True)
        )
    print(
        f"\ncross-encoder {card['model_id']} ({card['model_version']}) on its {split} queries; CPU trade-off "
        f"(idle p95 = CPU time / threads; wall figures at the load shown); served: {served.get('variant', 'fp32')}"
        f"@{served.get('max_length', card['max_length'])}"
    )
    print("\n".join(variants.table(results)))
    figures = []
    for r in results:
        config = {
            "bench": "rerank-tradeoff",
            "model": card["model_id"],
            "model_version": card["model_version"],
            "split": split,
            "variant": r.config.variant,
            "max_length": r.config.max_length,
            "candidates": r.config.candidates,
            "threads": r.config.threads,
            "optimization": r.config.optimization,
            "timed_queries": r.timed_queries,
            "load_average": r.load,  # while this figure was measured
            **({"measured_at": served.get("measured_at")} if from_card else {}),
        }
        figures += [
            figure("rerank.tradeoff.p50", r.p50_ms, "ms", **config),
            figure("rerank.tradeoff.p95", r.p95_ms, "ms", **config),
            figure("rerank.tradeoff.idle_p95", r.idle_p95_ms, "ms", **config),
            figure("rerank.tradeoff.ndcg10_fused", r.ndcg, "nDCG@10", **config),
            figure("rerank.tradeoff.ndcg10_alone", r.ce_ndcg, "nDCG@10", **config),
        ]
    print(f"figures: {record(figures)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench_rerank")
    parser.add_argument("--name", default=os.environ.get("RERANKER", "sample"))
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="eval/out/bench-rerank.json")
    parser.add_argument("--gpu", action="store_true", help="the model and Triton on CUDA (see the module's doc)")
    parser.add_argument("--tradeoff-queries", type=int, default=10, help="0: time every held-out query")
    parser.add_argument("--no-tradeoff", action="store_true", help="skip the CPU trade-off curve")
    parser.add_argument(
        "--tradeoff-from-card", action="store_true", help="print and record the card's study instead of measuring"
    )
    args = parser.parse_args(argv)
    model_dir = rerankers_root() / args.name
    if not args.no_tradeoff:
        tradeoff(model_dir, args.tradeoff_queries, args.tradeoff_from_card)
    work = batches(model_dir, args.requests, args.candidates)
    results = {}

    raw = TorchCudaScorer(model_dir) if args.gpu else OnnxScorer(model_dir, threads=args.threads)
    raw.warm_up()
    tokenised = [(raw.feeds(query, passages), passages) for query, passages in work]
    results["raw"] = measure(lambda feeds, _: raw.run(feeds), tokenised)
    if not args.gpu:
        results["in_process"] = measure(raw.score, work)

    repository = model_dir / "triton"
    if args.gpu:
        repository = install_into_triton(model_dir, Path(args.out).parent / "triton-gpu", with_torch=True).parent
    server = TritonServer(repository, free_port(), free_port(), free_port()).start(180)
    service = None
    try:
        runtime = server.runtime()
        print(f"Triton serves {raw.model_id} on {runtime}", flush=True)
        if args.gpu and "cuda" not in runtime.lower():
            raise SystemExit(f"--gpu: Triton's model runs on {runtime}, not CUDA; see {server.log_path}")
        triton = TritonScorer(server.grpc_address, timeout_s=60)
        triton.warm_up()
        maxsim_weight = triton.maxsim_weight
        results["triton"] = measure(triton.score, work)
        port = free_port()
        env = {
            **os.environ,
            "RAGMESH_RERANKER_PORT": str(port),
            "RAGMESH_RERANKER_METRICS_PORT": "0",
            "RAGMESH_RERANKER_MODEL": "triton",
            "RAGMESH_RERANKER_TRITON_ADDRESS": server.grpc_address,
            "RAGMESH_RERANKER_CROSS_ENCODER_K": str(args.candidates),
        }
        service = subprocess.Popen(
            [sys.executable, "-m", "services.reranker.server"],
            env=env,
            cwd=ROOT_DIR,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            grpc.channel_ready_future(channel).result(timeout=120)
            stub = reranker_pb2_grpc.RerankerStub(channel)
            requests = [(as_request(q, p), p) for q, p in work]
            results["service"] = measure(lambda request, _: stub.Rerank(request, timeout=120), requests)
    finally:
        if service:
            service.terminate()
            service.wait(30)
        server.stop()

    device = device_name() if args.gpu else "cpu"
    where = f"{device}, Triton on {runtime}" if args.gpu else f"{args.threads} threads"
    print(
        f"reranker {raw.model_id} ({raw.model_version}), {args.requests} requests x {args.candidates} candidates, "
        f"max_length {raw.max_length}, {where}"
    )
    print(f"{'path':<12}{'pairs/s':>10}{'p50 ms':>10}{'p95 ms':>10}{'vs raw':>9}")
    for name, r in results.items():
        print(
            f"{name:<12}{r['pairs_per_s']:>10.1f}{r['p50_ms']:>10.1f}{r['p95_ms']:>10.1f}"
            f"{r['pairs_per_s'] / results['raw']['pairs_per_s']:>9.2f}"
        )
    config = {
        "bench": "rerank",
        "model": raw.model_id,
        "model_version": raw.model_version,
        "candidates": args.candidates,
        "max_length": raw.max_length,
        "threads": args.threads,
        "device": device,
        "triton_runtime": runtime,
    }
    print(
        "figures: "
        + str(
            record(
                [
                    figure(f"rerank.{stat}", r[key], unit, **config, path=name)
                    for name, r in results.items()
                    for stat, key, unit in (
                        ("p50", "p50_ms", "ms"),
                        ("p95", "p95_ms", "ms"),
                        ("pairs_per_s", "pairs_per_s", "pairs/s"),
                    )
                ]
            )
        )
    )
    if maxsim_weight > 0:
        print(f"service includes the maxsim signal the model's card fuses (weight {maxsim_weight:g})")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {
                "model_id": raw.model_id,
                "model_version": raw.model_version,
                "candidates": args.candidates,
                "service_maxsim_weight": maxsim_weight,
                "device": device,
                "triton_runtime": runtime,
                **results,
            },
            indent=2,
        )
    )
    return 0


def device_name() -> str:
    import torch

    return torch.cuda.get_device_name(0)


if __name__ == "__main__":
    sys.exit(main())
