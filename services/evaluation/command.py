"""`ragmesh eval`: ingest (when needed), run the cases through the live mesh, report, gate."""

import argparse
import contextlib
import dataclasses
import hashlib
import json
import sys
import time
from collections.abc import Set as AbstractSet
from pathlib import Path

from ragmesh.client import RagmeshClient
from services.cli.ingest import ingest
from services.cli.mesh import Mesh
from services.evaluation import gate
from services.evaluation.calibrate import calibrate as calibrate_threshold
from services.evaluation.calibrate import gated_outcome, results_from_report
from services.evaluation.cases import (
    EvalCase,
    beir_answerability,
    beir_documents,
    beir_tenant,
    load_beir,
    load_cases,
)
from services.evaluation.followed import as_follow_ups
from services.evaluation.mailed import as_mailed
from services.evaluation.pasted import with_pasted
from services.evaluation.report import HEADLINE, build_report, write_report
from services.evaluation.runner import ask_case, search_case
from services.evaluation.stories import with_stories
from services.evaluation.together import asked_together
from services.evaluation.typos import with_typos
from services.evaluation.withheld import WITHHELD, with_gold_withheld
from shared.calibration import AnswerDecision
from shared.calibration import save as save_calibration
from shared.credentials import gateway_channel
from shared.model import RETRIEVAL_MODES
from shared.ratelimit import within_rate_limit
from shared.stubs import common_pb2, gateway_pb2, gateway_pb2_grpc


@contextlib.contextmanager
def _mesh_or_gateway(args):
    """An authenticated gateway channel: a spawned mesh's local key per tenant, or the caller's own key."""
    if args.spawn:
        mesh = Mesh.on_free_ports(args.data_dir, extra_env=dict(args.env or []))
        print(f"starting a mesh for the evaluation (data in {args.data_dir}) ...", file=sys.stderr, flush=True)
        mesh.start(timeout=300)
        try:
            with mesh.gateway_channel() as channel:
                yield channel
        finally:
            mesh.stop()
    else:
        with gateway_channel(args.gateway) as channel:
            yield channel


def _ingest_corpus_dirs(client: RagmeshClient, dirs: list[str], tenants: set[str], timeout: float) -> None:
    for tenant in sorted(tenants):
        ok, failed = ingest(client, dirs, tenant, timeout, out=sys.stderr)
        if failed:
            raise SystemExit(f"eval: {failed} corpus documents failed to ingest for tenant {tenant}")


def _digest(items) -> str:
    return hashlib.sha256("\n".join(items).encode()).hexdigest()[:8]


def _ingest_beir(
    stub, beir_dir: str, tenant: str, timeout: float, excluded: AbstractSet[str] = frozenset(), batch: int = 64
) -> None:
    """Upsert the corpus (less `excluded`) into its own tenant. Re-running is cheap and always right:
    unchanged chunks are neither re-embedded nor rewritten, and a changed chunker or model replaces what it must."""
    docs = [d for d in beir_documents(beir_dir) if d[0] not in excluded]
    started = time.monotonic()
    failed = written = 0
    for i in range(0, len(docs), batch):
        request = gateway_pb2.IngestRequest(
            tenant_id=tenant,
            documents=[
                common_pb2.SourceDocument(
                    meta=common_pb2.DocumentMeta(
                        document_id=did, title=title, source_uri=did, content_type="text/plain"
                    ),
                    content=(text or title).encode(),
                )
                for did, title, text in docs[i : i + batch]
            ],
        )
        for result in stub.Ingest(request, timeout=timeout):
            failed += not result.ok
            written += result.chunks_written
        done = min(i + batch, len(docs))
        rate = done / max(time.monotonic() - started, 1e-9)
        print(f"\ringested {done}/{len(docs)} documents ({rate:.1f}/s)", end="", file=sys.stderr, flush=True)
    print(f"\n{written} chunks embedded ({'index reused' if not written else 'index updated'})", file=sys.stderr)
    if failed:
        raise SystemExit(f"eval: {failed} BEIR documents failed to ingest")


def run(args) -> int:
    if args.beir:
        query_ids = set(Path(args.queries_file).read_text().split()) if args.queries_file else None
        cases = load_beir(args.beir, args.split, query_ids)
        name = f"{Path(args.beir).name}/{args.split}" + (f" ({Path(args.queries_file).name})" if query_ids else "")
        excluded: set[str] = set()
        if args.unanswerable_share > 0:
            cases, excluded = beir_answerability(cases, args.unanswerable_share)
            tenant = f"{beir_tenant(args.beir)}-minus-{_digest(sorted(excluded))}"
            cases = [dataclasses.replace(c, tenant=tenant) for c in cases]
            name += f" (answerability: {len(excluded)} gold documents left out)"
    else:
        cases = load_cases(args.cases, args.corpus)
        name = Path(args.cases).name
    cases, described = select_cases(cases, args.splits, args.answerable_stride)
    name += described
    if args.typos is not None:
        cases = with_typos(cases, args.typos)
        name += f" (one slip per question, seed {args.typos})"
    if args.stories is not None:
        cases = with_stories(cases, args.stories)
        name += f" (each question told after a story, seed {args.stories})"
    if args.mailed is not None:
        cases = as_mailed(cases, args.mailed)
        name += f" (each question sent in a mail or chat template, seed {args.mailed})"
    if args.pasted is not None:
        if args.beir:
            raise SystemExit("--pasted needs the case format (--cases): it pastes from the corpus documents")
        cases = with_pasted(cases, args.corpus, args.pasted)
        name += f" (each question asked under a paragraph pasted from the documents, seed {args.pasted})"
    if args.followed is not None:
        if args.beir:
            raise SystemExit("--followed needs the case format (--cases): it reads the corpus's tables")
        cases = as_follow_ups(cases, args.corpus, args.followed)
        name += f" (each question naming one table row or amount asked as a chat follow-up, seed {args.followed})"
    if args.together is not None:
        cases = asked_together(cases, args.together)
        name += f" (each question asked together with another, seed {args.together})"
    if args.limit:
        cases = cases[: args.limit]
    if args.withhold_gold:
        plain = len(cases)
        cases = with_gold_withheld(cases)
        name += f" (+ {len(cases) - plain} asked with their gold documents withheld)"
    with _mesh_or_gateway(args) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        asks = not args.beir or args.unanswerable_share > 0
        if args.beir:
            _ingest_beir(stub, args.beir, cases[0].tenant if asks else beir_tenant(args.beir), args.timeout, excluded)
        elif args.ingest:
            _ingest_corpus_dirs(
                RagmeshClient(channel=channel, api_key=""), args.corpus, {c.tenant for c in cases}, args.timeout
            )
        results = evaluate(stub, cases, args.mode, args.timeout, beir=not asks, top_k=args.top_k, rerank=args.rerank)
        threshold = _threshold(stub, cases) if asks else None
    meta = {
        "name": name,
        "cases": len(cases),
        "mode": args.mode,
        "rerank": bool(args.rerank or asks),
        "reranker_model_id": ",".join(sorted({r.reranker_model_id for r in results if r.reranker_model_id})),
        "generator_id": ",".join(sorted({r.generator_id for r in results if r.generator_id})),
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    report = build_report(results, meta, answers=asks)
    out = write_report(report, args.out, threshold)
    _print_summary(report)
    print(f"report: {out / 'report.md'}")
    errors = [r for r in results if r.triage == "error"]
    if errors:
        print(
            f"eval: {len(errors)} of {len(results)} cases failed with an error (first: {errors[0].abstain_reason}); "
            "the report counts them as failed answers",
            file=sys.stderr,
        )
    degraded = [r for r in results if r.degraded]
    if degraded:
        print(
            f"eval: {len(degraded)} of {len(results)} answers were degraded (first: {degraded[0].case.case_id}: "
            f"{degraded[0].degraded}); they measure the fallback, not the configuration",
            file=sys.stderr,
        )
    if (errors or degraded) and (args.gate or args.write_baseline):
        # Figures a broken run produced would pass or fail the gate, or become the baseline, for no reason.
        print(
            "eval: no gate is judged and no baseline written from a run with errors or degraded answers",
            file=sys.stderr,
        )
        return 1
    if args.write_baseline:
        gate.write_baseline(args.write_baseline, report, HEADLINE, args.reason or "")
        print(f"baseline written to {args.write_baseline}")
    if args.gate:
        failures = gate.compare(report["overall"], gate.load_baseline(args.gate), HEADLINE, args.tolerance)
        if failures:
            print("EVAL GATE FAILED:\n  " + "\n  ".join(failures))
            return 3
        print(f"eval gate passed against {args.gate}")
    return 0


def select_cases(cases: list[EvalCase], splits: str, answerable_stride: int) -> tuple[list[EvalCase], str]:
    """The cases of the named splits ("all", or comma-separated names), then every unanswerable one and every
    `answerable_stride`-th answerable one of those (a smaller run for slow generators); with what was kept, in
    words, for the report's name."""
    described = ""
    if splits != "all":
        wanted = {s.strip() for s in splits.split(",") if s.strip()}
        present = {c.split for c in cases}
        if not wanted or not wanted <= present:
            raise SystemExit(
                f"eval: --splits {splits!r} names splits the cases do not have (they have {sorted(present - {''})})"
            )
        cases = [c for c in cases if c.split in wanted]
        described += f" [{'+'.join(sorted(wanted))}]"
    if answerable_stride > 1:
        answerable = {c.case_id for c in [c for c in cases if c.answerable][::answerable_stride]}
        cases = [c for c in cases if not c.answerable or c.case_id in answerable]
        described += f" (unanswerable + every {answerable_stride}th answerable)"
    return cases, described


def evaluate(
    stub,
    cases,
    mode: str = "hybrid",
    timeout: float = 120.0,
    beir: bool = False,
    top_k: int = 200,
    rerank: bool = False,
) -> list:
    """Every case through the gateway, one at a time (so latency figures are not contended). Progress: a
    bar with rate and ETA on a terminal, a line every 50 cases (with the same figures) in a log."""
    from tqdm import tqdm

    results = []
    started = time.monotonic()
    with tqdm(total=len(cases), desc="evaluating", unit="q", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:
        for n, case in enumerate(cases, start=1):
            if beir:
                results.append(search_case(stub, case, mode, timeout, top_k, rerank))
            else:
                results.append(ask_case(stub, case, mode, timeout))
            bar.update()
            if not sys.stderr.isatty() and (n % 50 == 0 or n == len(cases)):
                rate = n / max(time.monotonic() - started, 1e-9)
                print(
                    f"evaluated {n}/{len(cases)} ({rate:.1f}/s, {(len(cases) - n) / rate:.0f} s left)",
                    file=sys.stderr,
                    flush=True,
                )
    return results


def _threshold(stub, cases) -> float | None:
    """The gateway's abstention threshold, as it reports it, for the score plot."""
    if not cases:
        return None
    request = gateway_pb2.AskRequest(tenant_id=cases[0].tenant, question=cases[0].question)
    response, _ = within_rate_limit(lambda: stub.Ask(request, timeout=60))
    return response.abstain_threshold


def _print_summary(report: dict) -> None:
    keys = (
        "recall@1",
        "recall@5",
        "recall@10",
        "recall@50",
        "recall@100",
        "mrr@10",
        "ndcg@10",
        "citation_validity",
        "answer_accuracy",
        "wrong_answer_rate",
        "false_answer_rate",
        "over_abstention_rate",
        "evidence_completeness",
        "near_miss_answer_rate",
    )
    for name, row in (("overall", report["overall"]), *report.get("per_split", {}).items()):
        print(f"{name}: " + "  ".join(f"{k}={row[k]:.3f}" for k in keys if row.get(k) is not None))
    if report["triage"]:
        print("triage: " + ", ".join(f"{k}={v}" for k, v in sorted(report["triage"].items())))
    if report.get("degraded"):
        print(f"degraded: {report['degraded']} answers without a stage (each case's 'degraded' says why)")


def calibrate_from_report(args) -> int:
    """Calibrate on gate-off reports, pooled (e.g. the sample set's train/dev and a SciFact answerability
    run), and show what the threshold does on each; `--at T` only shows what T does."""
    reports = [(path, json.loads(Path(path).read_text())) for path in args.from_report]
    per_report, pooled = [], []
    for path, report in reports:
        if report.get("degraded"):
            raise SystemExit(f"calibrate: {path} has {report['degraded']} degraded answers; evaluate it again")
        results = [
            r
            for r in results_from_report(report)
            if args.splits == "all" or not r.case.split or r.case.split in args.splits.split(",")
        ]
        # The decision is calibrated on the written unanswerable questions; the near misses, some of which another
        # document answers, are its check (pooling them in was tried: eval/RESULTS.md).
        near_misses = [r for r in results if r.case.category == WITHHELD]
        if near_misses:
            print(f"{path}: {len(near_misses)} near misses (--withhold-gold) left out of the calibration")
            results = [r for r in results if r.case.category != WITHHELD]
        per_report.append((report["meta"].get("name", path), results))
        pooled += results
    if args.at is not None:
        decision = AnswerDecision(args.at)
    else:
        models = {r["meta"].get("reranker_model_id") for _, r in reports} - {"", None}
        model = args.reranker_model_id or (models.pop() if len(models) == 1 else "")
        if not model:
            raise SystemExit(
                f"calibrate: the reports name {sorted(models) or 'no'} reranker models; pass --reranker-model-id"
            )
        generators = ",".join(sorted({r["meta"].get("generator_id", "") for _, r in reports} - {""}))
        result = calibrate_threshold(
            pooled, model, generators, args.target_far, " + ".join(name for name, _ in per_report)
        )
        save_calibration(result, args.out)
        decision = result.decision()
        print(f"written to {args.out}")
    for name, results in [*per_report, *([("pooled", pooled)] if len(per_report) > 1 else [])]:
        print(f"{name}: gate off  {json.dumps(gated_outcome(results, AnswerDecision(float('-inf'))))}")
        print(f"{name}: gate {decision.threshold:.4f} {json.dumps(gated_outcome(results, decision))}")
    return 0


def run_calibration(args) -> int:
    if args.from_report:
        return calibrate_from_report(args)
    cases = load_cases(args.cases, args.corpus or ["examples"])
    if args.splits != "all":
        # Calibration never sees the split its result is reported on.
        cases = [c for c in cases if c.split in args.splits.split(",")]
    # The gate is switched off so every question reaches the generator; the threshold is then
    # chosen from what each threshold would have let through.
    args.env = [
        *(args.env or []),
        ("RAGMESH_GATEWAY_ABSTAIN_THRESHOLD", "-1e9"),
        ("RAGMESH_GATEWAY_CALIBRATION_FILE", "none"),
    ]
    with _mesh_or_gateway(args) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        if args.ingest:
            # The channel sends each tenant's key (its interceptor); the client adds none of its own.
            _ingest_corpus_dirs(
                RagmeshClient(channel=channel, api_key=""),
                args.corpus or ["examples"],
                {c.tenant for c in cases},
                args.timeout,
            )
        results = evaluate(stub, cases, "hybrid", args.timeout)
    degraded = [r.case.case_id for r in results if r.degraded]
    if degraded:
        # A threshold on rerank scores fitted where some were never computed would not be the reranker's.
        raise SystemExit(f"calibrate: {len(degraded)} answers were degraded (first: {degraded[0]}); run it again")
    models = {r.reranker_model_id for r in results if r.reranker_model_id}
    if len(models) != 1:
        raise SystemExit(f"calibrate: expected one reranker model across the run, saw {sorted(models) or 'none'}")
    generators = sorted({r.generator_id for r in results if r.generator_id})
    result = calibrate_threshold(results, models.pop(), ",".join(generators), args.target_far, Path(args.cases).name)
    save_calibration(result, args.out)
    second = (
        f", and from {result.support_threshold:.4f} when the answer covers {result.min_coverage:.2f} of the question"
        if result.support_threshold is not None
        else ""
    )
    print(
        f"threshold {result.threshold:.4f}{second} for reranker {result.reranker_model_id}: false-answer rate "
        f"{result.false_answer_rate:.3f} (target {args.target_far:.3f}), answerable answered "
        f"{result.answered_answerable_rate:.3f}, correct {result.correct_answerable_rate:.3f}; written to {args.out}"
    )
    return 0


def env_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def add_calibrate_parser(sub) -> None:
    p = sub.add_parser("calibrate", help="choose the abstention threshold from cases with unanswerable questions")
    p.add_argument("--cases", default="eval/cases/sample.jsonl")
    p.add_argument("--corpus", action="append")
    p.add_argument("--target-far", type=float, default=0.05, help="false-answer-rate target (default 5%%)")
    p.add_argument("--out", default="eval/calibration.json")
    p.add_argument("--splits", default="train,dev", help="case splits to calibrate on (comma-separated, or all)")
    p.add_argument(
        "--from-report",
        action="append",
        help="calibrate from gate-off `ragmesh eval` report.json files (repeat to pool) instead of running",
    )
    p.add_argument("--at", type=float, help="with --from-report: only show what this threshold does")
    p.add_argument("--reranker-model-id", help="with --from-report, when the report does not name it")
    p.add_argument("--spawn", action="store_true", help="start a private mesh (with the gate off)")
    p.add_argument("--data-dir", default=".ragmesh-data/calibrate")
    p.add_argument("--env", type=env_pair, action="append", metavar="NAME=VALUE")
    p.add_argument("--no-ingest", dest="ingest", action="store_false")
    p.add_argument("--gateway", default="127.0.0.1:7070")
    p.set_defaults(func=run_calibration)


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="evaluate retrieval and answers on a labelled set through the mesh")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--cases", help="JSONL in the project's case format")
    src.add_argument("--beir", help="a BEIR folder (corpus.jsonl, queries.jsonl, qrels/)")
    p.add_argument("--corpus", action="append", default=None, help="corpus folder(s) the cases quote (case format)")
    p.add_argument("--split", default="test")
    p.add_argument("--queries-file", help="only these query ids (whitespace-separated)")
    p.add_argument("--mode", choices=RETRIEVAL_MODES, default="hybrid")
    p.add_argument("--rerank", action="store_true", help="BEIR: rerank the candidates too")
    p.add_argument("--top-k", type=int, default=200, help="BEIR: chunks retrieved per query")
    p.add_argument(
        "--unanswerable-share",
        type=float,
        default=0.0,
        metavar="F",
        help="BEIR: ask instead of search, with this share of the queries made unanswerable by "
        "leaving their gold documents out of the corpus (an answerability domain)",
    )
    p.add_argument("--spawn", action="store_true", help="start a private mesh for the run")
    p.add_argument("--data-dir", default=".ragmesh-data/eval")
    p.add_argument(
        "--env",
        type=env_pair,
        action="append",
        metavar="NAME=VALUE",
        help="extra environment for a spawned mesh (e.g. RAGMESH_RERANKER_MODEL=passthrough)",
    )
    p.add_argument("--no-ingest", dest="ingest", action="store_false", help="case format: corpus already ingested")
    p.add_argument("--limit", type=int, default=0)
    p.add_argument(
        "--answerable-stride",
        type=int,
        default=1,
        metavar="K",
        help="keep every unanswerable case and every K-th answerable one (slow generators)",
    )
    p.add_argument(
        "--splits",
        default="all",
        help="case format: only the cases of these splits (comma-separated, e.g. train,dev; default all); "
        "--answerable-stride then applies within them",
    )
    p.add_argument(
        "--typos",
        type=int,
        metavar="SEED",
        help="ask each question with one slip in one of its longer words (a letter dropped, swapped or replaced; "
        "services/evaluation/typos.py), seeded",
    )
    p.add_argument(
        "--stories",
        type=int,
        metavar="SEED",
        help='ask each question told with a story around it ("My manager asked me this morning ... {question}"; '
        "services/evaluation/stories.py), the template chosen with the seed",
    )
    p.add_argument(
        "--mailed",
        type=int,
        metavar="SEED",
        help="ask each question as mail and chat clients send it (a quoted thread, a signature block, a banner, a "
        "mention; services/evaluation/mailed.py), the template chosen with the seed",
    )
    p.add_argument(
        "--pasted",
        type=int,
        metavar="SEED",
        help="ask each question under a paragraph pasted from its gold document (\"Here's what I found in the docs: "
        '... {question}"; services/evaluation/pasted.py), paragraph and form chosen with the seed',
    )
    p.add_argument(
        "--together",
        type=int,
        metavar="SEED",
        help='ask each question beside another in one message ("1) {first} 2) {second}"; '
        "services/evaluation/together.py), each judged on its own part of the answer, partner and form seeded",
    )
    p.add_argument(
        "--followed",
        type=int,
        metavar="SEED",
        help='ask each question naming one table row or amount as the chat follow-up that swaps it in ("how many '
        'users come with team", then "and enterprise?"; services/evaluation/followed.py), the others left out',
    )
    p.add_argument(
        "--withhold-gold",
        action="store_true",
        help="case format: also ask each answerable question with its gold documents left out of the search, as "
        "an unanswerable near miss (category 'gold withheld'; services/evaluation/withheld.py)",
    )
    p.add_argument("--out", default="eval/out/latest")
    p.add_argument("--gate", help="baseline JSON; exit 3 when a headline metric regresses")
    p.add_argument("--tolerance", type=float, default=0.02)
    p.add_argument("--write-baseline", help="write this run's headline metrics as the new baseline")
    p.add_argument("--reason", help="why the baseline changes (stored in it)")
    p.set_defaults(func=lambda args: run(_defaults(args)))


def _defaults(args):
    if args.beir and args.splits != "all":
        raise SystemExit("eval: --splits is for the case format; a BEIR folder takes --split")
    if args.beir and args.withhold_gold:
        raise SystemExit("eval: --withhold-gold is for the case format; a BEIR folder takes --unanswerable-share")
    if args.gate and not args.withhold_gold and "near_miss_answer_rate" in gate.load_baseline(args.gate):
        raise SystemExit(f"eval: {args.gate} gates the near misses' answer rate too: run with --withhold-gold")
    if args.cases and not args.corpus:
        args.corpus = ["examples"]
    return args
