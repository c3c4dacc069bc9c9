"""`ragmesh train-reranker`: mine, train, choose the fusion weight, export, install into Triton's repository.

Mining needs the mesh; training from a work folder of mined candidates needs only torch and
sentence-transformers, so it can run on a GPU machine (`--mine-only` here, the same command there).

    1. a private mesh over the corpus (hybrid first stage, no reranker) mines hard negatives;
    2. optional self-supervised phase (document title -> its body) teaches the model to read passages;
    3. the labelled phase (BEIR qrels; the `--exclude-queries` are never seen, nor the tuning split);
    4. on the tuning split (a fixed hash-chosen part of the training queries) the fusion weight against
       the first-stage ranks is chosen; a model with no gain there is written but not enabled;
    5. ONNX + tokenizer + ragmesh-reranker.json + MODEL_CARD.md into the work folder and the Triton
       model repository.
"""

import argparse
import hashlib
import json
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from ragmesh.client import RagmeshClient
from services.evaluation.metrics import ndcg_at, recall_at
from services.reranker import fusion
from services.reranker.cross_encoder import CARD_FILE, served_version, served_weights, serving_variant
from services.reranker.training import data, loop, variants
from services.reranker.triton_server import MODEL_TEMPLATE, rerankers_root
from shared.embedding.base import resolve_model_dir

TRITON_TEMPLATE = MODEL_TEMPLATE / "cross_encoder"
DEV_FILE = "mined-dev.jsonl"


def _say(message: str) -> None:
    print(f"[train-reranker {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def _mine(args, work: Path) -> tuple[list[data.Query], list[data.Query], list[data.Query]]:
    """(labelled training queries, tuning queries, self-supervised queries), mined once, cached in `work`."""
    paths = [work / "mined-train.jsonl", work / "mined-tune.jsonl", work / "mined-self.jsonl"]
    # The excluded (dev) queries are mined too, never trained or tuned on: the benchmark measures on them.
    dev_path = work / DEV_FILE
    wants_dev = bool(args.beir and args.exclude_queries)
    mined = all(p.is_file() for p in paths)
    if mined and (dev_path.is_file() or not wants_dev):
        _say(f"reusing mined candidates in {work}")
        return tuple(data.load_queries(p) for p in paths)  # type: ignore[return-value]
    from services.cli.mesh import Mesh
    from shared.stubs import chunker_pb2_grpc, gateway_pb2_grpc
    from shared.tls import stage_channel

    env = {
        "RAGMESH_RERANKER_MODEL": "passthrough",
        "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
        "RAGMESH_EMBED_MODEL": args.embed_model,
    }
    with Mesh.on_free_ports(args.data_dir, extra_env=env) as mesh:
        with (
            mesh.gateway_channel() as channel,
            stage_channel(mesh.address("chunker"), "chunker", "launcher") as chunker_channel,
        ):
            stub = gateway_pb2_grpc.GatewayStub(channel)
            dev: list[data.Query] = []
            if args.beir and mined:  # a folder mined before dev was: only the dev queries are new
                _say(f"reusing mined candidates in {work}; mining the dev queries")
                train, tune, self_supervised = (data.load_queries(p) for p in paths)
                from services.evaluation.cases import beir_tenant
                from services.evaluation.command import _ingest_beir

                _ingest_beir(stub, args.beir, beir_tenant(args.beir), 600.0)  # the index is reused when unchanged
                dev = _mine_dev(args, stub)
            elif args.beir:
                train, tune, self_supervised = _mine_beir(args, stub)
                if wants_dev:
                    dev = _mine_dev(args, stub)
            else:
                client = RagmeshClient(channel=channel, api_key="")  # the channel sends the mesh's keys
                train, tune, self_supervised = _mine_corpus(
                    args, stub, chunker_pb2_grpc.ChunkerStub(chunker_channel), client
                )
    for path, queries in zip(paths, (train, tune, self_supervised), strict=True):
        data.save_queries(path, queries)
    if wants_dev:
        data.save_queries(dev_path, dev)
    return train, tune, self_supervised


def _mine_dev(args, stub) -> list[data.Query]:
    """The `--exclude-queries` with their first-stage candidates, for measuring (bench-rerank), never training."""
    from services.evaluation.cases import load_beir

    excluded = set(Path(args.exclude_queries).read_text().split())
    cases = [c for c in load_beir(args.beir, args.split) if c.case_id in excluded]
    _say(f"mining {len(cases)} excluded (dev) queries for evaluation only")
    return data.mine_queries(stub, cases, args.depth, _say)


def _mine_beir(args, stub):
    from services.evaluation.cases import beir_tenant, load_beir
    from services.evaluation.command import _ingest_beir

    excluded = set(Path(args.exclude_queries).read_text().split()) if args.exclude_queries else set()
    cases = [c for c in load_beir(args.beir, args.split) if c.case_id not in excluded]
    rest, tune_ids = data.split_ids([c.case_id for c in cases], args.tune_fraction)
    tune_set = set(tune_ids)
    _say(f"{len(cases)} labelled queries ({len(excluded)} excluded): {len(rest)} train, {len(tune_ids)} tune")
    _ingest_beir(stub, args.beir, beir_tenant(args.beir), 600.0)
    train = data.mine_queries(stub, [c for c in cases if c.case_id not in tune_set], args.depth, _say)
    tune = data.mine_queries(stub, [c for c in cases if c.case_id in tune_set], args.depth, _say)
    titles = (
        data.mine_titles(stub, args.beir, beir_tenant(args.beir), args.self_supervised, args.depth, args.seed, _say)
        if args.self_supervised
        else []
    )
    clozes = (
        data.mine_sentences(
            stub, args.beir, beir_tenant(args.beir), args.self_supervised_sentences, args.depth, args.seed, _say
        )
        if args.self_supervised_sentences
        else []
    )
    return train, tune, titles + clozes


def _mine_corpus(args, stub, chunker, client: RagmeshClient):
    """No labels: heading -> section queries; a hash-chosen part of them is the tuning split."""
    from services.cli.documents import collect_files, to_source_document
    from services.cli.ingest import ingest

    tenant = "reranker-training"
    ok, failed = ingest(client, args.corpus, tenant, 600.0, out=sys.stderr)
    documents = [to_source_document(path, uri) for path, uri in collect_files(args.corpus)]
    queries = data.mine_headings(stub, chunker, documents, tenant, args.depth, _say)
    _, tune_ids = data.split_ids([q.query_id for q in queries], args.tune_fraction)
    held = set(tune_ids)
    _say(f"{ok} documents ({failed} failed), {len(queries)} heading queries, {len(held)} held out to tune")
    return [], [q for q in queries if q.query_id in held], [q for q in queries if q.query_id not in held]


MAXSIM_GRID = (0.0, 0.5, 1.0, 1.5, 2.0)


def maxsim_scores(embed_model: str, tune: list[data.Query]) -> list[np.ndarray]:
    """The maxsim reranker's scores for each tuning query's head (the rest -inf), as the service computes
    them; the candidate text is "title\nbody", the title standing as the heading, as it does for SciFact."""
    from services.reranker.service import MaxSimReranker
    from shared import config
    from shared.embedding import build_embedder, build_query_embedder
    from shared.model import Chunk, DocumentMeta, ScoredChunk, StageScores

    embedder = build_embedder(embed_model)
    query_embedder = build_query_embedder(embed_model, config.mesh().embed_query_variant, passages=embedder)
    ranker = MaxSimReranker(embedder, query_embedder=query_embedder)  # questions embedded as the service does
    ranker.warm_up()
    out = []
    for q in tune:
        candidates = []
        for c in q.candidates:
            title, _, body = c.text.partition("\n")
            chunk = Chunk(
                chunk_id=c.doc_id,
                meta=DocumentMeta(tenant_id="tune", document_id=c.doc_id, title=title),
                heading_path=[],
                body=body or title,
                embed_text=c.text,
                char_start=0,
                char_end=len(body),
                parent_section_id="",
                token_count=0,
                position=0,
            )
            candidates.append(ScoredChunk(chunk, StageScores(fused_rank=c.first_rank)))
        out.append(ranker.head_scores(q.text, candidates))
    return out


def choose_weight(model, tune: list[data.Query], maxsim: list[np.ndarray] | None = None) -> dict:
    """nDCG@10 on the tuning split for every weight in the grid (and every maxsim weight, when its scores
    are given); the best, ties going to the smaller weights."""
    maxsim_grid = MAXSIM_GRID if maxsim is not None else (0.0,)
    cells = [(m, w) for m in maxsim_grid for w in fusion.WEIGHT_GRID]
    ndcg: dict[tuple[float, float], list[float]] = {cell: [] for cell in cells}
    recall5: dict[tuple[float, float], list[float]] = {cell: [] for cell in cells}
    for n, q in enumerate(tune):
        first = [c.first_rank for c in q.candidates]
        scores = loop.score_pairs(model, q.text, [c.text for c in q.candidates])
        for m, w in cells:
            more = ((maxsim[n], m),) if m and maxsim is not None else ()
            order = fusion.fused_order(first, scores, w, more=more)
            ranks = {q.candidates[i].doc_id: pos for pos, i in enumerate(order, start=1)}
            ndcg[(m, w)].append(ndcg_at(ranks, q.gains, 10))
            recall5[(m, w)].append(recall_at(ranks, list(q.gains), 5))
    mean = {cell: float(np.mean(v)) for cell, v in ndcg.items()}
    table = {
        str(w): {"ndcg@10": mean[(0.0, w)], "recall@5": float(np.mean(recall5[(0.0, w)]))} for w in fusion.WEIGHT_GRID
    }
    best_m, best_w = max(cells, key=lambda c: (round(mean[c], 6), -c[0], -c[1]))
    chosen = {
        "weight": best_w,
        "tune_gain_ndcg@10": mean[(best_m, best_w)] - mean[(0.0, 0.0)],
        "tune_queries": len(tune),
        "grid": table,
    }
    if maxsim is not None:
        chosen["maxsim_weight"] = best_m
        chosen["maxsim_grid"] = {
            str(m): {str(w): round(mean[(m, w)], 4) for w in fusion.WEIGHT_GRID} for m in maxsim_grid
        }
        chosen["best_ndcg@10"] = mean[(best_m, best_w)]
    return chosen


def _model_id(name: str, onnx_path: Path) -> tuple[str, str]:
    digest = hashlib.sha256(onnx_path.read_bytes()).hexdigest()[:12]
    return f"ragmesh-ce/{name}", digest


def install_into_triton(model_dir: Path, repository: Path, with_torch: bool = False) -> Path:
    """Copy the python-backend template and this model's files into `<repository>/cross_encoder/1/`;
    `with_torch` adds the checkpoint as hf/, for GPUs where ONNX Runtime has no CUDA provider."""
    target = repository / "cross_encoder"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(TRITON_TEMPLATE, target)
    card = json.loads((model_dir / CARD_FILE).read_text())
    # Triton serves the fp32 model at its trained window (the GPU path, and the same scores as in-process fp32):
    # the card's CPU variant is for the in-process scorer. An int8 graph's scores also move with the ONNX Runtime
    # version (seen: ~3e-3 between Triton's 1.23 and the services' 1.32), so one model id would score two ways.
    serving = serving_variant(card, "fp32")
    # A GPU host can be given the checkpoint alone (model.onnx is twice the fp16 weights): such a repository
    # serves only on a GPU, and model.py says so when it lands on a CPU.
    onnx = (model_dir / "model.onnx").is_file()
    if not onnx and not with_torch:
        raise FileNotFoundError(f"{model_dir}: no model.onnx to serve (with_torch serves the checkpoint on a GPU)")
    for name in ("tokenizer.json", CARD_FILE, "MODEL_CARD.md") + (("model.onnx",) if onnx else ()):
        shutil.copy2(model_dir / name, target / "1" / name)
    if with_torch:
        shutil.copytree(model_dir / "checkpoint", target / "1" / "hf")
    weights = served_weights(card)
    served = {
        "ragmesh_model_id": card["model_id"],
        "ragmesh_model_version": served_version(card, serving),
        "ragmesh_fusion_weight": str(weights["weight"]),
        "ragmesh_fusion_k": str(card["fusion"]["k"]),
        "ragmesh_maxsim_weight": str(weights["maxsim_weight"]),
    }
    with open(target / "config.pbtxt", "a", encoding="utf-8") as fh:
        for key, value in served.items():
            fh.write(f'parameters {{ key: "{key}" value {{ string_value: "{value}" }} }}\n')
    return target


def _write_card(out: Path, card: dict) -> None:
    (out / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
    tune = card["fusion"]
    lines = [
        f"# {card['model_id']} (version {card['model_version']})",
        "",
        f"Cross-encoder initialised from `{card['init']}`, max_length {card['max_length']}, seed {card['seed']}.",
        "",
        "## Data",
        "",
    ]
    lines += [f"- {k}: {v}" for k, v in card["data"].items()]
    lines += ["", "## Training", ""] + [f"- {k}: {v}" for k, v in card["training"].items()]
    lines += [
        "",
        "## Fusion with the first stage (tuning split)",
        "",
        f"Chosen weight {tune['weight']} (gain {tune['tune_gain_ndcg@10']:+.4f} nDCG@10 over the fused order "
        f"on {tune['tune_queries']} tuning queries); enabled by default: {card['enabled']}.",
        "",
        "| weight | nDCG@10 | recall@5 |",
        "|---|---|---|",
    ]
    lines += [f"| {w} | {v['ndcg@10']:.4f} | {v['recall@5']:.4f} |" for w, v in tune["grid"].items()]
    if "maxsim_grid" in tune:
        weights = list(next(iter(tune["maxsim_grid"].values())))
        lines += [
            "",
            f"With the maxsim rank as a third signal: chosen maxsim weight {tune['maxsim_weight']} "
            f"(nDCG@10 {tune['best_ndcg@10']:.4f}). Rows: maxsim weight; columns: cross-encoder weight.",
            "",
            "| maxsim \\ ce | " + " | ".join(weights) + " |",
            "|---" * (len(weights) + 1) + "|",
        ]
        lines += [
            f"| {m} | " + " | ".join(f"{v:.4f}" for v in row.values()) + " |" for m, row in tune["maxsim_grid"].items()
        ]
    (out / "MODEL_CARD.md").write_text("\n".join(lines) + "\n")


def _train(args, model, title_groups, labelled_groups) -> dict:
    history: dict = {}
    started = time.monotonic()
    if title_groups and args.self_supervised_epochs:
        _say(f"self-supervised phase: {len(title_groups)} groups x {len(title_groups[0].passages)} passages")
        history["self_supervised_loss"] = loop.train_groups(
            model, title_groups, args.self_supervised_epochs, args.lr, args.groups_per_step, args.seed, _say
        )
    if labelled_groups:
        _say(f"labelled phase: {len(labelled_groups)} groups x {len(labelled_groups[0].passages)} passages")
        history["labelled_loss"] = loop.train_groups(
            model, labelled_groups, args.epochs, args.lr, args.groups_per_step, args.seed + 1, _say
        )
    history["seconds"] = time.monotonic() - started
    history["device"] = str(model.device)
    return history


def run(args) -> int:
    work = Path(args.work_dir or rerankers_root() / args.name)
    work.mkdir(parents=True, exist_ok=True)
    loop.seed_everything(args.seed, args.threads)
    device = loop.pick_device(args.device)
    train, tune, titles = _mine(args, work)
    if args.mine_only:
        _say(f"mined {len(train)} train, {len(tune)} tune, {len(titles)} self-supervised queries into {work}")
        return 0
    rng = random.Random(args.seed)
    title_groups = data.groups(titles, args.negatives, rng) if titles else []
    labelled_groups = data.groups(train, args.negatives, rng) if train else []
    init = args.init or resolve_model_dir("sentence-transformers/all-MiniLM-L6-v2")
    checkpoint = work / "checkpoint"
    if args.resume and (checkpoint / "config.json").is_file():
        _say(f"resuming from the trained checkpoint in {checkpoint}")
        model = loop.load_cross_encoder(str(checkpoint), args.max_length, device)
        history = json.loads((work / "history.json").read_text())
    else:
        model = loop.load_cross_encoder(init, args.max_length, device)
        history = _train(args, model, title_groups, labelled_groups)
        model.save_pretrained(str(checkpoint))
        (work / "history.json").write_text(json.dumps(history))
    _say("choosing the fusion weight on the tuning split")
    similarity = maxsim_scores(args.embed_model, tune) if args.with_maxsim else None
    chosen = choose_weight(model, tune, similarity)
    _say(
        f"weight {chosen['weight']} (maxsim {chosen.get('maxsim_weight', 0.0)}): tune nDCG@10 gain "
        f"{chosen['tune_gain_ndcg@10']:+.4f}"
    )
    onnx_path = loop.export_onnx(model, work)
    model_id, version = _model_id(args.name, onnx_path)
    card = {
        "model_id": model_id,
        "model_version": version,
        "init": str(init),
        "max_length": args.max_length,
        "seed": args.seed,
        "enabled": chosen["weight"] > 0 and chosen["tune_gain_ndcg@10"] > 0,
        "fusion": {"k": fusion.RRF_K, **chosen},
        "data": {
            "labelled": (
                f"{args.beir} split {args.split}, excluding {args.exclude_queries or 'nothing'}"
                if args.beir
                else "none (self-supervised on " + ", ".join(args.corpus) + ")"
            ),
            "train_queries": len(train),
            "tune_queries": len(tune),
            "self_supervised_queries": len(titles),
            "negatives": f"{args.negatives} hard (hybrid top {args.depth}) + 1 random per positive",
            "embed_model_for_mining": args.embed_model,
        },
        "training": {
            "self_supervised_groups": len(title_groups),
            "self_supervised_epochs": args.self_supervised_epochs,
            "labelled_groups": len(labelled_groups),
            "epochs": args.epochs,
            "lr": args.lr,
            "groups_per_step": args.groups_per_step,
            "loss": "listwise softmax cross-entropy",
            "seconds": round(history["seconds"]),
            "device": history.get("device", "cpu"),
            **{k: [round(x, 4) for x in v] for k, v in history.items() if isinstance(v, list)},
        },
    }
    _write_card(work, card)
    installed = install_into_triton(work, work / "triton", args.triton_torch)
    if not args.no_variants:
        _say("quantising and measuring the CPU variants on the held-out queries")
        serving = variants.run(work, timed_queries=10)
        install_into_triton(work, work / "triton", args.triton_torch)
        _say(f"CPU serving variant: {serving['variant']} window {serving['max_length']}")
    _say(f"{model_id} version {version} written to {work}; Triton model at {installed}")
    print(
        json.dumps(
            {
                "model_id": model_id,
                "version": version,
                "enabled": card["enabled"],
                **chosen["grid"][str(chosen["weight"])],
                "weight": chosen["weight"],
                "maxsim_weight": chosen.get("maxsim_weight", 0.0),
                "tune_gain_ndcg@10": chosen["tune_gain_ndcg@10"],
            }
        )
    )
    return 0


def add_parser(sub) -> None:
    p = sub.add_parser("train-reranker", help="train the cross-encoder reranker; writes its Triton repository")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--beir", help="BEIR folder with labelled queries (corpus.jsonl, queries, qrels)")
    source.add_argument(
        "--corpus",
        action="append",
        help="documents in any format the chunker reads: self-supervised only (heading -> section)",
    )
    p.add_argument("--split", default="train")
    p.add_argument("--exclude-queries", help="query ids never trained or tuned on (the dev portion)")
    p.add_argument("--tune-fraction", type=float, default=0.2, help="training queries held out to choose the weight")
    p.add_argument("--data-dir", required=True, help="index folder for the mining mesh (reused when ingested)")
    p.add_argument("--embed-model", default="BAAI/bge-small-en-v1.5")
    p.add_argument("--self-supervised", type=int, default=1500, metavar="N", help="BEIR: title->body queries (0: none)")
    p.add_argument(
        "--self-supervised-sentences",
        type=int,
        default=0,
        metavar="N",
        help="BEIR: sentence->rest-of-document (inverse cloze) queries from N documents (0: none)",
    )
    p.add_argument("--self-supervised-epochs", type=int, default=1)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--negatives", type=int, default=6)
    p.add_argument("--depth", type=int, default=50, help="first-stage candidates mined per query")
    p.add_argument("--lr", type=float, default=3e-5)
    p.add_argument("--groups-per-step", type=int, default=4)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--init", help="model folder or hub name to start from (default: the MiniLM package)")
    p.add_argument("--name", default="scifact")
    p.add_argument("--work-dir", help="default ~/.cache/ragmesh/rerankers/NAME (its Triton repository: triton/)")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument(
        "--with-maxsim",
        action="store_true",
        help="also choose a weight for the maxsim reranker's "
        "rank as a third signal (the service then computes it next to the cross-encoder)",
    )
    p.add_argument(
        "--mine-only",
        action="store_true",
        help="mine the candidates into the work folder and stop "
        "(to train elsewhere, e.g. on a GPU machine, from that folder)",
    )
    p.add_argument("--resume", action="store_true", help="reuse the trained checkpoint in the work folder")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument(
        "--triton-torch",
        action="store_true",
        help="also install the torch checkpoint into the "
        "Triton model (a GPU instance runs it when ONNX Runtime has no CUDA provider)",
    )
    p.add_argument("--device", default="auto", help="auto (a GPU when one is visible), cpu or cuda[:N]")
    p.add_argument(
        "--no-variants",
        action="store_true",
        help="skip the int8 variants and their measurement on the held-out queries "
        "(the card then serves the fp32 model; `python -m services.reranker.training.variants` does it later)",
    )
    p.set_defaults(func=run)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="ragmesh")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["train-reranker", *(argv or sys.argv[1:])])
    return args.func(args)
