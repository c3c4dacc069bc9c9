"""A load scenario, declared in loadtest/scenarios/<name>.yaml: what to ingest and ask, which RPCs at which
concurrency steps for how long, whether to step on to the knee, the in-process comparison and the faults.
Latency budgets are not here: they come from deploy/observability/budgets.yaml, the file the alerts use."""

import dataclasses
from pathlib import Path

import yaml

SCENARIOS = Path(__file__).resolve().parent / "scenarios"
RPCS = ("Ask", "Search")
FAULTS = ("reranker", "triton", "generator", "retriever", "opensearch", "indexer", "opensearch-node")


@dataclasses.dataclass(frozen=True)
class Step:
    """One RPC at each listed concurrency for `duration_s` seconds; with `to_knee`, the concurrency goes on
    doubling past the list until p95 breaks the RPC's budget or a request fails (or `max_concurrency`)."""

    rpc: str
    concurrency: tuple[int, ...]
    duration_s: float
    to_knee: bool = False
    max_concurrency: int = 64


@dataclasses.dataclass(frozen=True)
class FaultPlan:
    """A bounded Ask load at `concurrency`; each fault starts `lead_s` into its own load window, the stage stays
    down for `down_s`, and the load runs on `tail_s` after the restart (recovery is measured in that tail)."""

    faults: tuple[str, ...]
    concurrency: int = 2
    lead_s: float = 4.0
    down_s: float = 4.0
    tail_s: float = 10.0
    ingest_documents: int = 60


@dataclasses.dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    examples: bool
    example_folders: tuple[str, ...]
    scifact_documents: int
    eval_cases: str
    scifact_queries: int
    deadline_s: float
    warmup_requests: int
    steps: tuple[Step, ...]
    in_process_requests: int
    faults: FaultPlan | None


def _positive(value, where: str) -> float:
    if not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{where} must be a positive number, got {value!r}")
    return value


def load(path: str | Path) -> Scenario:
    """The scenario at `path`, or loadtest/scenarios/<path>.yaml when `path` is a bare name."""
    path = Path(path)
    if not path.suffix:
        path = SCENARIOS / f"{path}.yaml"
    raw = yaml.safe_load(path.read_text())
    where = path.name
    steps = []
    for i, step in enumerate(raw.get("steps", [])):
        if step["rpc"] not in RPCS:
            raise ValueError(f"{where}: steps[{i}].rpc {step['rpc']!r} is not one of {RPCS}")
        levels = tuple(int(_positive(c, f"{where}: steps[{i}].concurrency")) for c in step["concurrency"])
        steps.append(
            Step(
                step["rpc"],
                tuple(sorted(set(levels))),
                _positive(step["duration_s"], f"{where}: steps[{i}].duration_s"),
                bool(step.get("to_knee", False)),
                int(step.get("max_concurrency", 64)),
            )
        )
    faults = None
    if "faults" in raw:
        plan = raw["faults"]
        unknown = [f for f in plan["run"] if f not in FAULTS]
        if unknown:
            raise ValueError(f"{where}: faults.run names {unknown}, known faults are {FAULTS}")
        faults = FaultPlan(
            tuple(plan["run"]),
            int(plan.get("concurrency", 2)),
            float(plan.get("lead_s", 4.0)),
            float(plan.get("down_s", 4.0)),
            float(plan.get("tail_s", 10.0)),
            int(plan.get("ingest_documents", 60)),
        )
    corpus, questions = raw.get("corpus", {}), raw.get("questions", {})
    return Scenario(
        name=raw.get("name", path.stem),
        description=raw.get("description", ""),
        examples=bool(corpus.get("examples", True)),
        example_folders=tuple(corpus["examples"]) if isinstance(corpus.get("examples"), list) else (),
        scifact_documents=int(corpus.get("scifact_documents", 0)),
        eval_cases=questions.get("eval_cases", "eval/cases/*.jsonl"),
        scifact_queries=int(questions.get("scifact_queries", 0)),
        deadline_s=float(_positive(raw.get("deadline_s", 10.0), f"{where}: deadline_s")),
        warmup_requests=int(raw.get("warmup_requests", 10)),
        steps=tuple(steps),
        in_process_requests=int(raw.get("in_process", {}).get("requests", 0)),
        faults=faults,
    )
