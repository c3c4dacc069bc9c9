"""Is a change faster? One load-test scenario run on two builds of ragmesh, alternately, on one host.

A single run's figures move with the host (other work on it, a neighbour's load): on a 2-core machine the mesh /
in-process ratio of one build ranged over 1.61-1.94 within an hour. Alternating the builds, in ABBA order, spreads
that drift over both sides; each figure is then compared by its median per side, and flagged when every run of one
side lies beyond every run of the other.

    python -m loadtest.ab --base HEAD~3                  # the working tree against HEAD~3: 3 rounds of mesh-cost
    make loadtest-ab BASE=HEAD~3 AB_ARGS="--rounds 5 --scenario ask-search"

The base is checked out with `git worktree` (removed afterwards) and runs with stubs generated from its own protos;
both sides use this checkout's .venv and .tools. Writes loadtest/out/ab/ab.md and ab.json (every run's figures).
"""

import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from loadtest import metrics
from services.cli.mesh import stop_on_sigterm

ROOT = Path(__file__).resolve().parents[1]
STUBS = Path("clients", "python", "src")


def log(message: str) -> None:
    print(f"[ab] {message}", file=sys.stderr, flush=True)


def figures(report: dict) -> dict[str, float]:
    """The comparable figures of one loadtest.run report: per step throughput and latency, the mesh against the
    in-process pipeline, and the mean time per Ask in each part of the mesh (milliseconds)."""
    out: dict[str, float] = {}
    for rpc, steps in report.get("steps", {}).items():
        for step in steps:
            name = f"{rpc} c={step['concurrency']}"
            out[f"{name} req/s"] = step["throughput"]
            for q in ("p50", "p95"):
                if step.get(q) is not None:
                    out[f"{name} {q} ms"] = step[q] * 1000
    compared = report.get("in_process")
    if compared:
        for q in ("p50", "p95"):
            out[f"mesh {q} ms"] = compared["mesh"][q] * 1000
            out[f"in-process {q} ms"] = compared["in_process"]["total"][q] * 1000
            out[f"mesh / in-process {q}"] = compared["ratio"][q]
        parts = compared.get("breakdown_mean_s") or {}
        for stage, times in parts.get("stages", {}).items():
            if times.get("server") is not None:
                out[f"{stage} server ms"] = times["server"] * 1000
            if (stage_hop := metrics.hop(times)) is not None:
                out[f"{stage} hop ms"] = stage_hop * 1000
        if parts.get("gateway_own") is not None:
            out["gateway own ms"] = parts["gateway_own"] * 1000
        cpu = compared.get("cpu_per_ask_s") or {}
        if cpu.get("mesh"):
            out["mesh CPU ms per Ask"] = sum(metrics.stage_cpu(cpu["mesh"]).values()) * 1000
        if cpu.get("in_process"):
            out["in-process CPU ms per Ask"] = cpu["in_process"] * 1000
    return out


def compare(base: list[dict[str, float]], new: list[dict[str, float]]) -> list[dict]:
    """One row per figure that every run of both sides has: the runs, the medians, their difference, and whether
    the two sides' ranges are apart (every run of one beyond every run of the other)."""
    if not base or not new:
        return []
    names = [n for n in base[0] if all(n in run for run in (*base, *new))]
    rows = []
    for name in names:
        a, b = [run[name] for run in base], [run[name] for run in new]
        rows.append(
            {
                "figure": name,
                "base": a,
                "new": b,
                "base_median": statistics.median(a),
                "new_median": statistics.median(b),
                "difference": statistics.median(b) - statistics.median(a),
                "apart": max(a) < min(b) or max(b) < min(a),
            }
        )
    return rows


def markdown(rows: list[dict], base_ref: str, rounds: int, scenario: str) -> str:
    def runs(values: list[float]) -> str:
        return " / ".join(f"{v:.3g}" for v in values)

    lines = [
        f"# A/B: working tree against {base_ref}",
        "",
        f"Scenario `{scenario}`, {rounds} rounds in ABBA order on one host. Medians per side; 'apart' when every run "
        f"of one side lies beyond every run of the other (with {rounds} runs a side, chance alone does that 1 time "
        f"in {chance_apart(rounds)}).",
        "",
        "| figure | base runs | new runs | base median | new median | new - base | apart |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['figure']} | {runs(r['base'])} | {runs(r['new'])} | {r['base_median']:.3g} | "
            f"{r['new_median']:.3g} | {r['difference']:+.3g} | {'yes' if r['apart'] else ''} |"
        )
    return "\n".join(lines) + "\n"


def chance_apart(runs: int) -> int:
    """1 in how many times two sides of `runs` runs each, drawn from one distribution, come out apart: of the
    C(2n, n) equally likely orderings of the pooled runs, two put one side wholly beyond the other."""
    return math.comb(2 * runs, runs) // 2


def order(rounds: int) -> list[tuple[int, str]]:
    """ABBA: base first in even rounds, the new build first in odd ones."""
    plan = []
    for i in range(rounds):
        sides = ("base", "new") if i % 2 == 0 else ("new", "base")
        plan += [(i + 1, side) for side in sides]
    return plan


def checkout(ref: str, folder: Path) -> Path:
    """The base as a detached worktree, with this checkout's .venv and .tools, and stubs from its own protos."""
    tree = folder / "base"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), ref], check=True)
    for shared in (".venv", ".tools"):
        (tree / shared).symlink_to(ROOT / shared)
    # -o: the shared venv counts as installed; make must not reinstall it from the worktree.
    subprocess.run(["make", "-s", "-o", ".venv/.installed", "stubs"], cwd=tree, check=True)
    return tree


def run_to_end(command: list[str], **popen) -> int:
    """subprocess.run, except for how a stopped A/B run stops its child: SIGINT, which loadtest.run of any
    build unwinds from (stopping its mesh by pid), where subprocess.run's SIGKILL would leave the child's
    stages running and holding their ports."""
    with subprocess.Popen(command, **popen) as child:
        try:
            return child.wait()
        except BaseException:
            child.send_signal(signal.SIGINT)
            try:
                child.wait(60)
            except subprocess.TimeoutExpired:
                child.kill()
            raise


def run_once(tree: Path, scenario: str, out: Path, scifact: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / STUBS), os.environ.get("PYTHONPATH", "")])}
    command = [str(tree / ".venv" / "bin" / "python"), "-m", "loadtest.run", scenario, "--out", str(out)]
    returncode = run_to_end([*command, "--scifact", str(scifact)], cwd=tree, env=env)
    reports = list(out.glob("*/report.json"))
    if returncode not in (0, 1) or not reports:  # 1: a budget broke, which is a figure, not a failure
        raise SystemExit(f"loadtest.run in {tree} exited {returncode} without a report")
    return json.loads(reports[0].read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="loadtest.ab", description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="git ref of the build to compare against")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scenario", default="mesh-cost", help="a name in loadtest/scenarios/ or a path")
    parser.add_argument("--scifact", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    parser.add_argument("--out", type=Path, default=ROOT / "loadtest" / "out" / "ab")
    args = parser.parse_args(argv)
    stop_on_sigterm()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    # Both sides run this checkout's scenario file (a base may predate it), on one SciFact folder.
    named = ROOT / "loadtest" / "scenarios" / f"{args.scenario}.yaml"
    scenario = str(Path(args.scenario).resolve() if Path(args.scenario).is_file() else named)
    scifact = args.scifact.resolve()
    folder = Path(tempfile.mkdtemp(prefix="ragmesh-ab-"))
    runs: dict[str, list[dict[str, float]]] = {"base": [], "new": []}
    try:
        trees = {"base": checkout(args.base, folder), "new": ROOT}
        for round_number, side in order(args.rounds):
            log(f"round {round_number}: {side}")
            report = run_once(trees[side], scenario, folder / f"{side}-{round_number}", scifact)
            runs[side].append(figures(report))
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(folder / "base")], check=False)
        shutil.rmtree(folder, ignore_errors=True)
    rows = compare(runs["base"], runs["new"])
    args.out.mkdir(parents=True, exist_ok=True)
    text = markdown(rows, args.base, args.rounds, args.scenario)
    (args.out / "ab.md").write_text(text)
    (args.out / "ab.json").write_text(json.dumps({"base": args.base, "runs": runs, "rows": rows}, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
