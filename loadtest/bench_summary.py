"""The headline of one `make bench` run: every goal of issue #19 with the figure this run measured for it.

Each benchmark merges its figures into `loadtest/out/bench.json` (loadtest/figures.py). `make bench` writes the
time it starts (`--start`), runs them one after another, and ends with this summary (`--since`): only figures
measured since that time are read, so the table is one run's, and every goal whose figure the run did not
produce is listed as not measured instead of being filled from an older run.

    python -m loadtest.bench_summary --start              # writes loadtest/out/bench-run-start
    python -m loadtest.bench_summary --since              # the summary of the run that started then
    python -m loadtest.bench_summary --since 2026-12-01T05:00:00Z
"""

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from loadtest import bench_ask
from loadtest.figures import BENCH_JSON
from services.reranker.training import variants

RUN_START = BENCH_JSON.with_name("bench-run-start")
SIZES = (10_000, 100_000, 1_000_000)
RETRIEVE_GOALS_MS = {100_000: 50.0, 1_000_000: 150.0}  # retrieve p95, embedded index
CONFIG_KEYS = ("variant", "max_length", "candidates", "threads", "optimization")
RECALL_GOAL = 0.98  # k-NN recall@50 against exact search
MAXSIM_GOAL_MS = 30.0  # maxsim rerank of 50 candidates, p95 on a cold process
SCIFACT_RERANKER = "scifact"  # the name `make reranker-scifact` trains
ANSWER_GOAL_MS = 50.0  # what the answer stage adds to an Ask, p95 (issue #15)

Figure = dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Row:
    what: str
    value: str
    goal: str = ""
    verdict: str = ""  # "met", "MISSED", "not measured" or "" (no goal)


def load(since: str, path: Path = BENCH_JSON) -> list[Figure]:
    """The figures measured at or after `since` (ISO 8601 UTC, as figures.record stamps them)."""
    figures = json.loads(path.read_text()) if path.exists() else []
    return [f for f in figures if f.get("measured_at", "") >= since]


def pick(figures: Iterable[Figure], name: str, **config: Any) -> list[Figure]:
    return [f for f in figures if f["name"] == name and all(f["config"].get(k) == v for k, v in config.items())]


def one(figures: list[Figure], name: str, **config: Any) -> Figure | None:
    """The figure of that name and configuration (the latest, should a run have measured it twice)."""
    found = pick(figures, name, **config)
    return max(found, key=lambda f: f["measured_at"]) if found else None


def _ms(f: Figure | None) -> str:
    return "-" if f is None or f["value"] is None else f"{f['value']:.1f} ms"


def _load(f: Figure | None) -> str:
    return "" if f is None else f" (load {f['config'].get('load_average', '?')})"


def _goal(f: Figure | None, goal: float, fits: Callable[[float, float], bool], unit: str) -> tuple[str, str]:
    verdict = "not measured" if f is None or f["value"] is None else "met" if fits(f["value"], goal) else "MISSED"
    return f"{goal:g}{unit}", verdict


def at_most(value: float, goal: float) -> bool:
    return value <= goal


def at_least(value: float, goal: float) -> bool:
    return value >= goal


def retrieval_rows(figures: list[Figure]) -> list[Row]:
    rows = []
    backends = sorted({f["config"]["backend"] for f in pick(figures, "retrieval.p95")} | {"embedded", "opensearch"})
    for size in SIZES:
        for backend in backends:
            config = {"chunks": size, "backend": backend}
            p50 = one(figures, "retrieval.p50", query="hybrid", **config)
            p95 = one(figures, "retrieval.p95", query="hybrid", **config)
            goal = RETRIEVE_GOALS_MS.get(size) if backend == "embedded" else None
            bound, verdict = _goal(p95, goal, at_most, " ms") if goal else ("", "")
            rows.append(
                Row(
                    f"retrieve p50 / p95, {backend}, {size:,} chunks",
                    f"{_ms(p50)} / {_ms(p95)}{_load(p95)}",
                    bound,
                    verdict if p95 or goal else "not measured",
                )
            )
            recall = one(figures, "retrieval.knn_recall_at_50", query="knn", **config)
            memory = one(figures, "retrieval.vector_memory_per_100k", query="knn", **config)
            if recall or backend == "embedded":
                bound, verdict = _goal(recall, RECALL_GOAL, at_least, "")
                rows.append(
                    Row(
                        f"k-NN recall@50, {backend}, {size:,} chunks",
                        "-" if recall is None else f"{recall['value']:.3f}",
                        bound,
                        verdict,
                    )
                )
            if memory:
                rows.append(Row(f"memory per 100k chunks, {backend}, {size:,} chunks", f"{memory['value']:.0f} MiB"))
    return rows


def maxsim_rows(figures: list[Figure]) -> list[Row]:
    rows = []
    corpora = sorted({f["config"]["corpus"] for f in pick(figures, "rerank.maxsim.p95")}) or ["sample"]
    for corpus in corpora:
        stored = one(figures, "rerank.maxsim.p95", corpus=corpus, path="stored")
        stored50 = one(figures, "rerank.maxsim.p50", corpus=corpus, path="stored")
        bound, verdict = _goal(stored, MAXSIM_GOAL_MS, at_most, " ms")
        rows.append(
            Row(
                f"maxsim rerank of 50, cold process, {corpus}: p50 / p95",
                f"{_ms(stored50)} / {_ms(stored)}{_load(stored)}",
                bound,
                verdict,
            )
        )
        on_the_fly = one(figures, "rerank.maxsim.p95", corpus=corpus, path="on_the_fly")
        if stored and on_the_fly and stored["value"]:
            rows.append(
                Row(
                    f"maxsim p95 embedding per query / vectors stored at ingest, {corpus}",
                    f"{on_the_fly['value'] / stored['value']:.0f}x",
                )
            )
    for corpus in ("sample", "scifact"):  # warm: the reranker stage inside a running mesh's Ask
        warm = one(figures, f"ask.{corpus}.rerank.p95")
        warm50 = one(figures, f"ask.{corpus}.rerank.p50")
        rows.append(
            Row(
                f"maxsim rerank, warm (stage of an Ask), {corpus}: p50 / p95",
                f"{_ms(warm50)} / {_ms(warm)}",
                "",
                "" if warm else "not measured",
            )
        )
    return rows


def cross_encoder_rows(figures: list[Figure]) -> list[Row]:
    """Per trained model: the full model, and the variant variants.choose picks from this run's figures (the
    fastest within the tolerance of the full model's own nDCG@10 and within the p95 budget)."""
    rows = []
    models = sorted(
        {(f["config"]["model"], f["config"]["model_version"]) for f in pick(figures, "rerank.tradeoff.p95")}
    )
    for model, version in models:
        results = []
        for timed in pick(figures, "rerank.tradeoff.p95", model=model, model_version=version):
            config = variants.Config(**{k: timed["config"][k] for k in CONFIG_KEYS})
            found = {
                name: one(figures, f"rerank.tradeoff.{name}", model=model, model_version=version, **asdict(config))
                for name in ("p50", "idle_p95", "ndcg10_fused", "ndcg10_alone")
            }
            stat = {name: float(f["value"]) for name, f in found.items() if f and f["value"] is not None}
            if len(stat) < len(found):
                continue
            results.append(
                variants.Measured(
                    config,
                    stat["ndcg10_fused"],
                    stat["ndcg10_alone"],
                    stat["p50"],
                    timed["value"],
                    float("nan"),
                    stat["idle_p95"] * config.threads,
                    timed["config"].get("timed_queries", 0),
                    timed["config"].get("load_average", float("nan")),
                )
            )
        # The full model (fp32 at its trained window, every candidate, the service's threads) is the reference.
        full = [r for r in results if r.config == variants.Config("fp32", r.config.max_length)]
        if not full:
            continue
        results.sort(key=lambda r: r is not full[0])
        rows.append(
            Row(
                f"cross-encoder {model}@{version}, full model ({full[0].config.label}): p95 / nDCG@10",
                f"{full[0].idle_p95_ms:.0f} ms / {full[0].ce_ndcg:.4f}",
            )
        )
        chosen, _ = variants.choose(results, weight=0.0)
        goal = f"p95 <= {variants.BUDGET_MS:g} ms, nDCG@10 within {variants.TOLERANCE}"
        shown = chosen or min(results, key=lambda r: r.idle_p95_ms)
        rows.append(
            Row(
                f"cross-encoder {model}, {'chosen' if chosen else 'fastest'} variant ({shown.config.label})",
                f"{shown.idle_p95_ms:.0f} ms / {shown.ce_ndcg:.4f}",
                goal,
                "met" if chosen else "MISSED",
            )
        )
    if not models:
        rows.append(Row("cross-encoder variants: p95 / nDCG@10", "-", "", "not measured"))
    # Issue #19 chooses the CPU variant on SciFact's dev portion: the sample model's curve does not stand in for it.
    if not any(model.endswith(f"/{SCIFACT_RERANKER}") for model, _ in models):
        rows.append(
            Row(
                f"cross-encoder ragmesh-ce/{SCIFACT_RERANKER}, variants on SciFact's dev portion",
                f"no {SCIFACT_RERANKER} model measured (`make reranker-scifact`, then `make bench-rerank "
                f"RERANKER={SCIFACT_RERANKER}`)",
                f"p95 <= {variants.BUDGET_MS:g} ms, nDCG@10 within {variants.TOLERANCE}",
                "not measured",
            )
        )
    return rows


def ask_rows(figures: list[Figure]) -> list[Row]:
    rows = []
    for corpus, goal_s in bench_ask.GOALS_P95_S.items():
        p50, p95 = one(figures, f"ask.{corpus}.total.p50"), one(figures, f"ask.{corpus}.total.p95")
        bound, verdict = _goal(p95, goal_s * 1000, at_most, " ms")
        documents = f", {p95['config'].get('documents', '?'):,} documents" if p95 else ""
        rows.append(
            Row(
                f"Ask end to end, {corpus}{documents}: p50 / p95",
                f"{_ms(p50)} / {_ms(p95)}{_load(p95)}",
                bound,
                verdict,
            )
        )
        shares = [
            (stage, one(figures, f"ask.{corpus}.{stage}.share")) for stage in (*bench_ask.STAGES, "gateway_and_hops")
        ]
        if all(share for _, share in shares):
            rows.append(
                Row(
                    f"Ask share by stage, {corpus}",
                    ", ".join(f"{stage} {share['value']:.0%}" for stage, share in shares if share),
                )
            )
    answer = one(figures, "answer.p95", generator="coverage rule (extractive-v1)")
    bound, verdict = _goal(answer, ANSWER_GOAL_MS, at_most, " ms")
    rows.append(Row("answer stage (coverage rule) on recorded contexts: p95", _ms(answer), bound, verdict))
    return rows


def summary(figures: list[Figure]) -> list[tuple[str, list[Row]]]:
    return [
        ("Retrieve (BM25 + k-NN + fusion)", retrieval_rows(figures)),
        ("Rerank: maxsim", maxsim_rows(figures)),
        ("Rerank: cross-encoder on CPU", cross_encoder_rows(figures)),
        ("Ask", ask_rows(figures)),
    ]


def render(since: str, sections: list[tuple[str, list[Row]]]) -> str:
    lines = [f"# make bench: the run since {since} ({BENCH_JSON})"]
    for title, rows in sections:
        lines += ["", f"## {title}", "", "| figure | value | goal | verdict |", "|---|---|---|---|"]
        lines += [f"| {r.what} | {r.value} | {r.goal} | {r.verdict} |" for r in rows]
    verdicts = [r.verdict for _, rows in sections for r in rows if r.verdict]
    lines += [
        "",
        f"goals: {verdicts.count('met')} met, {verdicts.count('MISSED')} missed, "
        f"{verdicts.count('not measured')} not measured in this run",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--start", action="store_true", help=f"write the run's start time to {RUN_START}")
    group.add_argument("--since", nargs="?", const="", help=f"figures since this time (default: {RUN_START})")
    args = parser.parse_args(argv)
    if args.start:
        RUN_START.parent.mkdir(parents=True, exist_ok=True)
        RUN_START.write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + "\n")
        return 0
    since = args.since or (RUN_START.read_text().strip() if RUN_START.exists() else "")
    if not since:
        print(f"bench_summary: no --since and no {RUN_START} (make bench writes it)", file=sys.stderr)
        return 2
    print(render(since, summary(load(since))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
