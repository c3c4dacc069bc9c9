"""Runs a load scenario against a private mesh and writes loadtest/out/<scenario>/ (report.md, report.json, plots).

    python -m loadtest.run ask-search                       # make loadtest
    python -m loadtest.run faults                           # make loadtest-faults
    python -m loadtest.run faults --backend opensearch --reranker triton

Exit status: 0 when every budget held (and every fault drill met its expectation), 1 otherwise, with one line
per broken budget naming the RPC or stage, the concurrency and the figures.
"""

import argparse
import dataclasses
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from loadtest import budgets as budget_file
from loadtest import ghz, metrics, report
from loadtest.faults import run_faults
from loadtest.harness import TENANT, LoadMesh, load_mesh, log
from loadtest.scenario import Scenario, Step, load
from services.cli.mesh import MeshError, parse_replicas, stop_on_sigterm

ROOT = Path(__file__).resolve().parents[1]
FUNNEL_STAGES = ("retrieve", "rerank", "generate")


def measure_step(harness: LoadMesh, rpc: str, concurrency: int, duration_s: float, deadline_s: float) -> dict:
    """One ghz run at one concurrency, with every stage's metrics scraped before and after."""
    (before, cpu_before), started = harness.read_metrics(), time.monotonic()
    result = ghz.run(
        harness.address,
        rpc,
        harness.messages(rpc),
        harness.api_key,
        concurrency,
        duration_s=duration_s,
        deadline_s=deadline_s,
    )
    seconds, (after, cpu_after) = time.monotonic() - started, harness.read_metrics()
    changed = metrics.delta(before, after)
    stages = metrics.stage_summary(changed, FUNNEL_STAGES)
    return {
        "concurrency": concurrency,
        "requests": len(result.calls),
        "throughput": result.throughput,
        **result.percentiles(),
        "statuses": result.statuses(),
        "failed": result.failed(),
        "stages": stages,
        # Time waiting for one of the gateway's in-flight slots (None when the gateway has no limit).
        "admission_wait": metrics.histogram_summary(changed, metrics.ADMISSION_HISTOGRAM, rpc=rpc),
        "stage_cdf": {
            name: metrics.cdf(metrics.histogram_buckets(changed, metrics.STAGE_HISTOGRAM, stage=name))
            for name in stages
        },
        "degraded": metrics.total(changed, metrics.DEGRADED),
        "cpu": metrics.cpu_use(cpu_before, cpu_after, len(result.calls), seconds, os.cpu_count() or 1),
        "latencies": [c.latency for c in result.calls if c.ok],
    }


def run_step(harness: LoadMesh, step: Step, deadline_s: float, budgets: budget_file.Budgets) -> list[dict]:
    """The step's concurrency levels, then (to_knee) doubling on until p95 breaks the budget or a request fails."""
    budget = budgets.rpcs[step.rpc].p95
    levels, results = list(step.concurrency), []
    while levels:
        concurrency = levels.pop(0)
        log(f"{step.rpc} at concurrency {concurrency} for {step.duration_s:g}s")
        measured = measure_step(harness, step.rpc, concurrency, step.duration_s, deadline_s)
        measured["enforced"] = concurrency in step.concurrency
        measured["within_budget"] = measured["failed"] == 0 and (measured["p95"] or 0) <= budget
        results.append(measured)
        log(
            f"  {measured['throughput']:.1f} ok/s, p50/p95/p99 {report.ms(measured['p50'])}/"
            f"{report.ms(measured['p95'])}/{report.ms(measured['p99'])} ms, statuses {measured['statuses']}"
        )
        if step.to_knee and not levels and measured["within_budget"] and concurrency * 2 <= step.max_concurrency:
            levels.append(concurrency * 2)
    return results


def knee(steps: list[dict], budget: float, rpc: str) -> dict:
    """Requests/s at the budget: the best throughput within it, and the rate where p95 crosses it (linear
    between the last level within the budget and the first beyond)."""
    within = [s for s in steps if s["within_budget"]]
    beyond = [s for s in steps if not s["within_budget"]]
    out: dict = {"rpc": rpc, "budget_p95_s": budget}
    if not within:
        out["summary"] = f"{rpc}: no concurrency level met the p95 budget of {report.ms(budget)} ms."
        return out
    best = max(within, key=lambda s: s["throughput"])
    out.update(rps=best["throughput"], concurrency=best["concurrency"], p95_s=best["p95"])
    first_beyond = next((s for s in beyond if s["concurrency"] > within[-1]["concurrency"]), None)
    if first_beyond is None:
        out["summary"] = (
            f"{rpc}: within the p95 budget ({report.ms(budget)} ms) at every level up to concurrency "
            f"{steps[-1]['concurrency']}; best {best['throughput']:.1f} req/s at concurrency {best['concurrency']} "
            "(the knee is beyond the levels tried)."
        )
        return out
    last = within[-1]
    reason = f"{first_beyond['failed']} failed requests" if first_beyond["failed"] else "p95 over budget"
    if first_beyond["p95"] and first_beyond["p95"] > budget and first_beyond["p95"] > last["p95"]:
        share = (budget - last["p95"]) / (first_beyond["p95"] - last["p95"])
        out["rps_at_budget"] = last["throughput"] + share * (first_beyond["throughput"] - last["throughput"])
    out["summary"] = (
        f"{rpc} knee: {best['throughput']:.1f} req/s at concurrency {best['concurrency']} (p95 "
        f"{report.ms(best['p95'])} ms, budget {report.ms(budget)} ms); at concurrency {first_beyond['concurrency']} "
        f"{reason} (p95 {report.ms(first_beyond['p95'])} ms, {first_beyond['throughput']:.1f} req/s)"
        + (f"; p95 reaches the budget near {out['rps_at_budget']:.1f} req/s." if "rps_at_budget" in out else ".")
    )
    return out


def violations(steps: dict[str, list[dict]], budgets: budget_file.Budgets) -> list[str]:
    """Every budget broken at an enforced level, naming the RPC or stage."""
    found = []
    for rpc, results in steps.items():
        for s in (r for r in results if r["enforced"]):
            at = f"at concurrency {s['concurrency']}"
            if s["failed"]:
                found.append(f"{rpc} {at}: {s['failed']} failed requests {s['statuses']}")
            for q in budget_file.QUANTILES:
                limit = budgets.rpcs[rpc].get(q)
                if s[q] is not None and s[q] > limit:
                    found.append(f"{rpc} end to end {at}: {q} {report.ms(s[q])} ms > budget {report.ms(limit)} ms")
            for stage, figures in s["stages"].items():
                for q in budget_file.QUANTILES:
                    limit = budgets.stages[stage].get(q)
                    if figures[q] is not None and figures[q] > limit:
                        found.append(
                            f"stage {stage} under {rpc} {at}: {q} {report.ms(figures[q])} ms > budget "
                            f"{report.ms(limit)} ms"
                        )
    return found


def compare_in_process(harness: LoadMesh, requests: int, deadline_s: float) -> dict:
    """The mesh's Ask and the in-process pipeline on the same questions, one at a time."""
    from loadtest import hop_floor
    from loadtest.inprocess import InProcessPipeline

    questions = harness.questions[:requests]
    messages = [{"tenant_id": TENANT, "question": q} for q in questions]
    log(f"in-process comparison: {len(questions)} questions through the mesh, then in this process")

    # Each side answers the questions once untimed, then timed: both rerankers have then cached the same
    # chunks' sentence vectors, and neither side's figure is flattered by the other's warm caches.
    def ask_all():
        return ghz.run(
            harness.address, "Ask", messages, harness.api_key, 1, requests=len(questions), deadline_s=deadline_s
        )

    ask_all()  # untimed
    before, cpu_before = harness.read_metrics()
    mesh = ask_all()
    after, cpu_after = harness.read_metrics()
    breakdown = metrics.mesh_breakdown(metrics.delta(before, after), FUNNEL_STAGES)
    pipeline = InProcessPipeline(harness.mesh.env())
    direct = pipeline.run(TENANT, questions)
    mesh_q = mesh.percentiles()
    ratio = {q: (mesh_q[q] / direct["total"][q]) if mesh_q[q] and direct["total"][q] else None for q in mesh_q}
    ok = mesh.ok_latencies
    breakdown["client"] = float(ok.mean()) if len(ok) else None
    breakdown["in_process"] = {part: direct["mean"][part] for part in ("total", *FUNNEL_STAGES)}
    log("  mesh/in-process " + ", ".join(f"{q} {r:.2f}" for q, r in ratio.items() if r))
    # Last, with the mesh idle: what the hops alone cost, the floor under the ratio.
    floor = hop_floor.measure(harness.mesh)
    least = hop_floor.least_ratio(direct["total"]["p50"], floor) if direct["total"]["p50"] else None
    log("  empty call per hop p50 " + ", ".join(f"{s} {f['p50'] * 1000:.2f} ms" for s, f in floor.items()))
    return {
        "requests": len(questions),
        "mesh": mesh_q,
        "mesh_failed": mesh.failed(),
        "in_process": direct,
        "ratio": ratio,
        "hop_floor_s": floor,
        "least_ratio_p50": least,
        "breakdown_mean_s": breakdown,
        # CPU seconds per Ask: each process kind of the mesh (and ghz) over the timed pass, and the in-process
        # pipeline's own over its timed pass.
        "cpu_per_ask_s": {
            "mesh": metrics.cpu_per_request(cpu_before, cpu_after, len(mesh.calls)),
            "in_process": direct["cpu_mean"],
        },
        "mesh_latencies": [c.latency for c in mesh.calls if c.ok],
    }


def warm_up(harness: LoadMesh, scenario: Scenario) -> None:
    """First calls pay for lazily built views and connections; they are not part of any figure."""
    if scenario.warmup_requests:
        for rpc in sorted({s.rpc for s in scenario.steps} | {"Ask"}):
            ghz.run(
                harness.address,
                rpc,
                harness.messages(rpc),
                harness.api_key,
                2,
                requests=scenario.warmup_requests,
                deadline_s=scenario.deadline_s,
            )


def main(argv: list[str] | None = None) -> int:
    stop_on_sigterm()
    parser = argparse.ArgumentParser(prog="loadtest.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", help="a name in loadtest/scenarios/ or a path to a scenario file")
    parser.add_argument("--backend", choices=("embedded", "opensearch"), default="embedded")
    parser.add_argument("--reranker", choices=("default", "triton"), default="default")
    parser.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    parser.add_argument("--out", type=Path, default=ROOT / "loadtest" / "out")
    parser.add_argument("--keep", action="store_true", help="keep the mesh's data dir and logs")
    parser.add_argument(
        "--fresh-ingest",
        action="store_true",
        help="ingest the corpus even when a snapshot of its index is cached (loadtest/snapshot.py)",
    )
    parser.add_argument("--only", default="", help="run only these fault drills of the scenario (comma-separated)")
    parser.add_argument(
        "--replicas",
        action="append",
        default=[],
        metavar="STAGE=N",
        help="run N processes of a stage, as `ragmesh up --replicas` (repeatable; a fault drill kills the first)",
    )
    args = parser.parse_args(argv)
    try:
        replicas = parse_replicas(args.replicas)
    except MeshError as err:
        parser.error(str(err))
    scenario = load(args.scenario)
    if args.only and scenario.faults:
        chosen = tuple(f for f in scenario.faults.faults if f in args.only.split(","))
        if not chosen:
            raise SystemExit(f"--only {args.only}: none of the scenario's faults {scenario.faults.faults}")
        scenario = dataclasses.replace(scenario, faults=dataclasses.replace(scenario.faults, faults=chosen))
    budgets = budget_file.load()
    started, clock = datetime.now(UTC), time.monotonic()
    out: dict = {
        "scenario": scenario.name,
        "description": scenario.description,
        "started": started.isoformat(timespec="seconds"),
        "scenario_file": dataclasses.asdict(scenario),
        "budgets": dataclasses.asdict(budgets),
        "steps": {},
    }
    phases: dict[str, float] = {}
    mark = time.monotonic()

    def phase(name: str) -> None:
        """Seconds since the previous phase ended, under `name` (the report says where a run's time went)."""
        nonlocal mark
        now = time.monotonic()
        phases[name] = phases.get(name, 0.0) + now - mark
        mark = now

    with load_mesh(
        scenario, args.backend, args.reranker, args.scifact, args.keep, not args.fresh_ingest, replicas
    ) as harness:
        phase("mesh start and ingest")
        env = harness.mesh.env()
        out["setup"] = {
            "cpus": os.cpu_count(),
            "load_average": " ".join(f"{x:.1f}" for x in os.getloadavg()),
            "backend": args.backend,
            "reranker": env.get("RAGMESH_RERANKER_MODEL", "maxsim"),
            # Processes per stage where more than one (`--replicas`).
            "replicas": {stage: n for stage, n in harness.mesh.replicas.items() if n > 1},
            # Where Triton's instance runs the model (a GPU host's instance may have fallen back to the CPU).
            "reranker_runtime": harness.reranker_runtime,
            "generator": env.get("RAGMESH_GENERATOR_BACKEND", "extractive"),
            "documents": harness.documents,
            "chunks": harness.chunks,
            "ingest_s": harness.ingest_seconds,
            "ingest_cached": harness.ingest_cached,
            "questions": len(harness.questions),
            "deadline_s": scenario.deadline_s,
        }
        warm_up(harness, scenario)
        phase("warm-up")
        for step in scenario.steps:
            out["steps"].setdefault(step.rpc, []).extend(run_step(harness, step, scenario.deadline_s, budgets))
            phase(f"{step.rpc} steps")
        for step in scenario.steps:
            if step.to_knee:
                out["knee"] = knee(out["steps"][step.rpc], budgets.rpcs[step.rpc].p95, step.rpc)
                log(out["knee"]["summary"])
        if scenario.in_process_requests:
            out["in_process"] = compare_in_process(harness, scenario.in_process_requests, scenario.deadline_s)
            phase("in-process comparison")
        if scenario.faults:
            out["faults"] = [dataclasses.asdict(f) for f in run_faults(harness, scenario.faults, scenario.deadline_s)]
            phase("faults")
    out["violations"] = violations(out["steps"], budgets)
    out["violations"] += [
        f"fault {f['fault']}: {'; '.join(f['problems'])}" for f in out.get("faults", []) if not f["met"]
    ]
    phase("mesh stop")
    out["seconds"] = time.monotonic() - clock
    out["load_average_end"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    out["phases"] = phases
    written = report.write(args.out / scenario.name, out, budgets)
    log(f"wrote {', '.join(str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p) for p in written)}")
    print(written[0].read_text())  # report.md: every figure a closing note quotes, with the load it ran under
    for line in out["violations"]:
        print(
            f"BUDGET BROKEN: {line}" if not line.startswith("fault") else f"EXPECTATION FAILED: {line}", file=sys.stderr
        )
    return 1 if out["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
