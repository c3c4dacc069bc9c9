"""loadtest/out/<scenario>/: report.json (every figure), report.md (the tables an SRE reads) and the plots
(latency CDF end to end and per stage; throughput and p95 against concurrency with the budget line)."""

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402 - after the backend is chosen

from loadtest import metrics  # noqa: E402
from loadtest.budgets import Budgets  # noqa: E402

# The goal for the cost of the microservice design: mesh latency / in-process latency at p50.
RATIO_GOAL_P50 = 1.10


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f}" if seconds >= 0.1 else f"{seconds * 1000:.1f}"


def write(out_dir: Path, report: dict, budgets: Budgets) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "report.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    plots = [
        p
        for p in (
            _cdf_end_to_end(out_dir, report),
            _cdf_stages(out_dir, report),
            _saturation(out_dir, report, budgets),
            _fault_timelines(out_dir, report),
        )
        if p
    ]
    (out_dir / "report.md").write_text(markdown(report, budgets, [p.name for p in plots]))
    return [out_dir / "report.md", out_dir / "report.json", *plots]


# ---- markdown ----------------------------------------------------------------------------------------


def breakdown_lines(comparison: dict) -> list[str]:
    """Where the mesh's extra time goes, in ms per Ask (means over the timed pass; the parts add up)."""
    parts = comparison.get("breakdown_mean_s")
    if not parts or parts.get("client") is None:
        return []
    direct = parts["in_process"]
    lines = [
        "",
        "Where the time goes, mean ms per Ask over the timed pass (sums of the stages' own histograms / Asks):",
        "",
        "| part | in-process | mesh: stage server | mesh: gateway's call | hop (call - server) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, stage in parts["stages"].items():
        lines.append(
            f"| {name} | {ms(direct.get(name))} | {ms(stage['server'])} | {ms(stage['gateway_call'])} | "
            f"{ms(metrics.hop(stage))} |"
        )
    into_gateway = None if parts["gateway_ask"] is None else parts["client"] - parts["gateway_ask"]
    lines += [
        f"| gateway's own work (auth, answer log, tracing, response) | - | - | {ms(parts['gateway_own'])} | - |",
        f"| ghz to gateway and back (transport, (de)serialization) | - | - | - | {ms(into_gateway)} |",
        f"| **total** | {ms(direct['total'])} | - | {ms(parts['client'])} (as ghz saw it) | - |",
    ]
    return lines


def cpu_lines(rpc: str, steps: list[dict], cpus: int) -> list[str]:
    """CPU per request by process kind at each concurrency, and how busy that kept the machine (older reports
    lack it)."""
    measured = [s for s in steps if s.get("cpu") and s["cpu"]["per_request_s"]]
    if not measured:
        return []
    kinds = list(dict.fromkeys(k for s in measured for k in s["cpu"]["per_request_s"]))
    lines = [
        "",
        f"CPU per {rpc} by process, ms (user + system; each stage's processes from their `process_cpu_seconds_total`, "
        f"ghz is the load generator on the same machine), and the share of the {cpus} CPUs kept busy:",
        "",
        "| concurrency | " + " | ".join(kinds) + " | all | CPUs busy |",
        "|---:|" + "---:|" * (len(kinds) + 2),
    ]
    for s in measured:
        per_request = s["cpu"]["per_request_s"]
        cells = [ms(per_request.get(k)) for k in kinds] + [ms(sum(per_request.values()))]
        busy = s["cpu"]["busy"]
        cells.append("-" if busy is None else f"{busy:.0%}")
        lines.append(f"| {s['concurrency']} | " + " | ".join(cells) + " |")
    return lines


def cpu_comparison_lines(comparison: dict) -> list[str]:
    """The CPU an Ask costs in the mesh against the in-process pipeline (older reports lack it)."""
    cpu = comparison.get("cpu_per_ask_s")
    if not cpu or not cpu.get("mesh") or not cpu.get("in_process"):
        return []
    mesh = cpu["mesh"]
    stages = metrics.stage_cpu(mesh)
    spent = sum(stages.values())
    parts = ", ".join(f"{k} {ms(v)}" for k, v in sorted(stages.items(), key=lambda kv: -kv[1]))
    generator = metrics.LOAD_GENERATOR
    return [
        "",
        f"CPU per Ask over the timed pass: the mesh's processes {ms(spent)} ms ({parts}; {generator} "
        f"{ms(mesh.get(generator))}), "
        f"the in-process pipeline {ms(cpu['in_process'])} ms: {spent / cpu['in_process']:.2f} times the CPU, the "
        "other side of the latency ratio (serializing, copying and handing each request between processes).",
    ]


def floor_lines(comparison: dict, goal: float = RATIO_GOAL_P50) -> list[str]:
    """The least the hops cost with nothing in them, and the ratio that leaves at best (older reports lack it)."""
    floor, least = comparison.get("hop_floor_s"), comparison.get("least_ratio_p50")
    if not floor or least is None:
        return []
    calls = ", ".join(f"{stage} {f['p50'] * 1000:.2f} ({f['p95'] * 1000:.2f})" for stage, f in floor.items())
    verdict = "below" if least <= goal else "above"
    return [
        "",
        f"The floor under the ratio: an empty call (the gRPC health check, one at a time through each server's own "
        f"stack, mesh idle) takes p50 (p95) {calls} ms. An Ask crosses these {len(floor)} hops, so with empty "
        f"messages and no work in the services the mesh/in-process ratio at p50 could at best be {least:.2f} on "
        f"this host, {verdict} the {goal:.2f} goal.",
    ]


def markdown(report: dict, budgets: Budgets, plots: list[str]) -> str:
    setup = report["setup"]
    lines = [
        f"# Load test `{report['scenario']}`",
        "",
        report.get("description", ""),
        "",
        f"- When: {report['started']}; took {report['seconds']:.0f} s on {setup['cpus']} CPU(s), load average at "
        f"start {setup['load_average']}, at the end {report.get('load_average_end', '-')} (ghz runs on the same "
        "machine, 1 CPU).",
        f"- Mesh: {setup['backend']} index, {setup['reranker']} reranker"
        + (f" (on {setup['reranker_runtime']})" if setup.get("reranker_runtime") else "")
        + f", {setup['generator']} generator"
        + "".join(f"; {n} {stage} processes" for stage, n in setup.get("replicas", {}).items())
        + "; gateway rate limit off; every call carries the tenant's local API key.",
        f"- Corpus: {setup['documents']} documents, {setup['chunks']} chunks, ingested in {setup['ingest_s']:.1f} s"
        + (
            f" (when its index snapshot {setup['ingest_cached']} was made; this run restored it)"
            if setup.get("ingest_cached")
            else ""
        )
        + f"; {setup['questions']} questions (labelled evaluation questions interleaved with SciFact queries).",
        "- Where the run's time went: "
        + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in report.get("phases", {}).items())
        + ".",
        f"- Deadline per request: {setup['deadline_s']:g} s. Latencies in ms; stage figures are the gateway's "
        "histograms (interpolated inside buckets, as Prometheus' histogram_quantile does).",
        "",
        "## Verdict",
        "",
    ]
    lines += [f"- **{v}**" for v in report["violations"]] or [
        "- Every budget held at the scenario's concurrency levels."
    ]
    for rpc, steps in report["steps"].items():
        budget = budgets.rpcs[rpc]
        lines += [
            "",
            f"## {rpc} (budget p50/p95/p99 {ms(budget.p50)}/{ms(budget.p95)}/{ms(budget.p99)} ms)",
            "",
            "| concurrency | requests | ok/s | p50 | p95 | p99 | failed | p95 within budget, none failed (the knee) |",
            "|---:|---:|---:|---:|---:|---:|---|---|",
        ]
        for s in steps:
            failed = ", ".join(f"{k} {v}" for k, v in s["statuses"].items() if k != "OK") or "0"
            tag = "" if s["enforced"] else " (knee search)"
            lines.append(
                f"| {s['concurrency']}{tag} | {s['requests']} | {s['throughput']:.1f} | {ms(s['p50'])} | "
                f"{ms(s['p95'])} | {ms(s['p99'])} | {failed} | {'yes' if s['within_budget'] else 'no'} |"
            )
        stage_names = list(dict.fromkeys(name for s in steps for name in s["stages"]))  # funnel order
        waited = any(s.get("admission_wait") for s in steps)
        if stage_names:
            lines += [
                "",
                f"Per stage under {rpc} load, p95 (p50/p99) in ms"
                + (
                    "; first the wait for one of the gateway's in-flight slots (RAGMESH_GATEWAY_MAX_IN_FLIGHT), "
                    "which no stage's figure includes:"
                    if waited
                    else ":"
                ),
                "",
                "| concurrency | "
                + ("waiting for a slot | " if waited else "")
                + " | ".join(f"{n} (budget {ms(budgets.stages[n].p95)})" for n in stage_names)
                + " |",
                "|---:|" + "---:|" * (len(stage_names) + waited),
            ]
            for s in steps:
                figures = [s.get("admission_wait")] if waited else []
                figures += [s["stages"].get(name) for name in stage_names]
                cells = ["-" if not q else f"{ms(q['p95'])} ({ms(q['p50'])}/{ms(q['p99'])})" for q in figures]
                lines.append(f"| {s['concurrency']} | " + " | ".join(cells) + " |")
        lines += cpu_lines(rpc, steps, setup["cpus"])
    knee = report.get("knee")
    if knee:
        lines += ["", "## Saturation", "", knee["summary"]]
    comparison = report.get("in_process")
    if comparison:
        lines += [
            "",
            "## Mesh against the in-process pipeline",
            "",
            f"The same {comparison['requests']} questions, one at a time, over the same index: the mesh's Ask (ghz, "
            "concurrency 1) against the retriever, reranker and generator classes called directly in one process. "
            "The mesh side also carries what only a service has: authentication, the answer log, tracing.",
            "",
            "| percentile | mesh ms | in-process ms | mesh / in-process |",
            "|---|---:|---:|---:|",
        ]
        for q in ("p50", "p95", "p99"):
            lines.append(
                f"| {q} | {ms(comparison['mesh'][q])} | {ms(comparison['in_process']['total'][q])} | "
                f"{comparison['ratio'][q]:.2f} |"
            )
        lines += floor_lines(comparison)
        stages = comparison["in_process"]
        lines += [
            "",
            "In-process per stage p50/p95 ms: "
            + ", ".join(
                f"{n} {ms(stages[n]['p50'])}/{ms(stages[n]['p95'])}" for n in ("retrieve", "rerank", "generate")
            ),
        ]
        lines += breakdown_lines(comparison)
        lines += cpu_comparison_lines(comparison)
    faults = report.get("faults")
    if faults:
        lines += [
            "",
            "## Faults under Ask load",
            "",
            "| fault | Asks | failed (by status) | degraded | hung | max ms | down s | restart s | recovery s |"
            " chunks lost/extra | expectation | met |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|---|",
        ]
        for f in faults:
            failed = ", ".join(f"{k} {v}" for k, v in f["failed"].items()) or "0"
            recovery = "-" if f["recovery_s"] is None else f"{f['recovery_s']:.2f}"
            restart = "-" if f["restart_s"] is None else f"{f['restart_s']:.1f}"
            baseline = (
                f" ({f['baseline_degraded']} of {f['baseline_asks']} before the drill)"
                if f.get("baseline_asks")
                else ""
            )
            lines.append(
                f"| {f['action']} | {f['requests']} | {failed} | {f['degraded']}{baseline} | {f['hung']} | "
                f"{ms(f['max_latency_s'])} | {f['down_s']:.1f} | {restart} | {recovery} | "
                f"{f['chunks_lost']}/{f['chunks_extra']} | {f['expectation']} | "
                f"{'yes' if f['met'] else 'NO: ' + '; '.join(f['problems'])} |"
            )
        errors = [f"- {f['fault']}: `{f['first_error']}`" for f in faults if f["first_error"]]
        if errors:
            lines += ["", "First error each drill's callers saw:", "", *errors]
    if plots:
        lines += ["", "## Plots", "", *[f"![{p}]({p})" for p in plots]]
    return "\n".join(lines) + "\n"


# ---- plots -------------------------------------------------------------------------------------------


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _cdf_end_to_end(out_dir: Path, report: dict) -> Path | None:
    runs = [(rpc, s) for rpc, steps in report["steps"].items() for s in steps if s["latencies"]]
    if not runs:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    for rpc, s in runs:
        values = sorted(s["latencies"])
        ax.step(
            [v * 1000 for v in values],
            [(i + 1) / len(values) for i in range(len(values))],
            where="post",
            label=f"{rpc} c={s['concurrency']}",
        )
    comparison = report.get("in_process")
    if comparison:
        for key, style, label in (
            ("mesh_latencies", ":", "Ask mesh c=1 (comparison)"),
            (None, "--", "Ask in-process c=1"),
        ):
            values = sorted(comparison[key] if key else comparison["in_process"]["latencies"])
            ax.step(
                [v * 1000 for v in values],
                [(i + 1) / len(values) for i in range(len(values))],
                where="post",
                linestyle=style,
                color="black",
                label=label,
            )
    ax.set(xscale="log", xlabel="latency (ms, log)", ylabel="share of requests", title="End-to-end latency CDF")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    return _save(fig, out_dir / "cdf_end_to_end.png")


def _cdf_stages(out_dir: Path, report: dict) -> Path | None:
    steps = [s for s in report["steps"].get("Ask", []) if s["stage_cdf"]]
    if not steps:
        return None
    names = list(dict.fromkeys(n for s in steps for n in s["stage_cdf"]))
    fig, axes = plt.subplots(1, len(names), figsize=(4 * len(names), 4), sharey=True, squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        for s in steps:
            cdf = s["stage_cdf"].get(name)
            if cdf:
                ax.plot([b * 1000 for b in cdf[0]], cdf[1], marker=".", label=f"c={s['concurrency']}")
        ax.set(xscale="log", xlabel="ms (bucket bounds, log)", title=name)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("share of calls")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("Per-stage latency CDF under Ask load (gateway histograms)")
    return _save(fig, out_dir / "cdf_stages.png")


def _saturation(out_dir: Path, report: dict, budgets: Budgets) -> Path | None:
    rpcs = [rpc for rpc, steps in report["steps"].items() if len(steps) > 1]
    if not rpcs:
        return None
    fig, axes = plt.subplots(1, len(rpcs), figsize=(6 * len(rpcs), 5), squeeze=False)
    for ax, rpc in zip(axes[0], rpcs, strict=True):
        steps = report["steps"][rpc]
        levels = [s["concurrency"] for s in steps]
        ax.plot(levels, [s["throughput"] for s in steps], marker="o", color="tab:blue", label="ok requests/s")
        ax.set(xscale="log", xlabel="concurrency (log)", ylabel="requests/s", title=f"{rpc}: throughput and p95")
        ax.set_xticks(levels, [str(c) for c in levels])
        right = ax.twinx()
        right.plot(levels, [(s["p95"] or 0) * 1000 for s in steps], marker="s", color="tab:red", label="p95 ms")
        right.axhline(budgets.rpcs[rpc].p95 * 1000, color="tab:red", linestyle="--", label="p95 budget")
        right.set_ylabel("p95 (ms)")
        ax.set_ylim(bottom=0)
        right.set_ylim(bottom=0)
        handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
        # Below the axes: inside, it sat on the budget line or the curves whichever corner it took.
        ax.legend(
            handles,
            [h.get_label() for h in handles],
            fontsize=8,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.16),
            ncol=3,
        )
        ax.grid(True, alpha=0.3)
    return _save(fig, out_dir / "saturation.png")


def _fault_timelines(out_dir: Path, report: dict) -> Path | None:
    faults = [f for f in report.get("faults", []) if f["calls"]]
    if not faults:
        return None
    fig, axes = plt.subplots(len(faults), 1, figsize=(9, 2.6 * len(faults)), squeeze=False)
    for ax, fault in zip(axes[:, 0], faults, strict=True):
        for status in sorted({c[2] for c in fault["calls"]}):
            points = [(c[0], c[1]) for c in fault["calls"] if c[2] == status]
            ax.scatter(
                [p[0] for p in points],
                [p[1] for p in points],
                s=8,
                label=status,
                color="tab:green" if status == "OK" else None,
            )
        for at, label, style in (
            (0.0, "fault", "-"),
            (fault["restart_at"], "restart", "--"),
            (fault["serving_at"], "back", ":"),
        ):
            ax.axvline(at, color="black", linestyle=style, linewidth=1, label=label)
        ax.axhline(report["setup"]["deadline_s"], color="tab:red", linewidth=1, label="deadline")
        ax.set(title=fault["action"].split(" (")[0], xlabel="request start, s from the fault", ylabel="latency s")
        ax.legend(fontsize=7, loc="upper right", ncol=3)
        ax.grid(True, alpha=0.3)
    return _save(fig, out_dir / "faults_timeline.png")
