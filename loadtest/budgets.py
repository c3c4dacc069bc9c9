"""The latency budgets (deploy/observability/budgets.yaml): read by the load tests, and the source of the latency
alert rules in alerts.yml, which are generated between two marker lines so that they cannot drift.

    python -m loadtest.budgets write   # regenerate the rules in alerts.yml (make alerts)
    python -m loadtest.budgets check   # exit 1 when alerts.yml's rules differ from budgets.yaml (make check-alerts)
"""

import argparse
import dataclasses
import difflib
import sys
from pathlib import Path

import yaml

from shared.observability.metrics import LATENCY_BUCKETS

ROOT = Path(__file__).resolve().parents[1]
BUDGETS_FILE = ROOT / "deploy" / "observability" / "budgets.yaml"
ALERTS_FILE = ROOT / "deploy" / "observability" / "alerts.yml"
QUANTILES = ("p50", "p95", "p99")
GATEWAY_SERVICE = "ragmesh.v1.Gateway"
BEGIN = (
    "      # BEGIN latency budgets: generated from budgets.yaml by `make alerts`; edit budgets.yaml, not these rules."
)
END = "      # END latency budgets"


@dataclasses.dataclass(frozen=True)
class Budget:
    """Upper bounds in seconds for one stage or RPC."""

    p50: float
    p95: float
    p99: float

    def get(self, quantile: str) -> float:
        return float(getattr(self, quantile))


@dataclasses.dataclass(frozen=True)
class AlertPolicy:
    quantile: str
    window: str
    hold: str
    severity: str


@dataclasses.dataclass(frozen=True)
class Budgets:
    stages: dict[str, Budget]
    rpcs: dict[str, Budget]
    alerts: AlertPolicy


def _budget(name: str, raw: dict) -> Budget:
    missing = [q for q in QUANTILES if q not in raw]
    if missing:
        raise ValueError(f"{BUDGETS_FILE.name}: {name} lacks {', '.join(missing)}")
    values = [float(raw[q]) for q in QUANTILES]
    if any(v <= 0 for v in values) or values != sorted(values):
        raise ValueError(f"{BUDGETS_FILE.name}: {name} must have 0 < p50 <= p95 <= p99, got {values}")
    return Budget(*values)


def load(path: Path = BUDGETS_FILE) -> Budgets:
    raw = yaml.safe_load(path.read_text())
    alerts = raw["alerts"]
    if alerts["quantile"] not in QUANTILES:
        raise ValueError(f"{path.name}: alerts.quantile must be one of {QUANTILES}")
    return Budgets(
        stages={name: _budget(f"stages.{name}", b) for name, b in raw["stages"].items()},
        rpcs={name: _budget(f"rpcs.{name}", b) for name, b in raw["rpcs"].items()},
        alerts=AlertPolicy(alerts["quantile"], alerts["window"], alerts["for"], alerts["severity"]),
    )


def off_bucket(budgets: Budgets) -> list[str]:
    """Budgets that are not a boundary of the latency histograms' buckets: there histogram_quantile interpolates
    inside a bucket, so an alert or a load-test verdict at that budget is only approximate."""
    bounds = {float(b) for b in LATENCY_BUCKETS}
    return [
        f"{kind}.{name}.{q} = {budget.get(q):g} s"
        for kind, table in (("stages", budgets.stages), ("rpcs", budgets.rpcs))
        for name, budget in table.items()
        for q in QUANTILES
        if budget.get(q) not in bounds
    ]


def human(seconds: float) -> str:
    """As the alert summaries write a budget: 250ms, 1s, 2.5s."""
    return f"{seconds * 1000:g}ms" if seconds < 1 else f"{seconds:g}s"


def _rule(name: str, what: str, selector: str, metric: str, budget: float, policy: AlertPolicy) -> list[str]:
    q = policy.quantile
    fraction = int(q[1:]) / 100
    return [
        f"      - alert: Ragmesh{name}LatencyBudget",
        f"        expr: histogram_quantile({fraction:g}, sum by (le) (rate({metric}_bucket{{{selector}}}"
        f"[{policy.window}]))) > {budget:g}",
        f"        for: {policy.hold}",
        f"        labels: {{severity: {policy.severity}}}",
        "        annotations:",
        f'          summary: "{what} {q} {{{{ $value | humanizeDuration }}}} is over its {human(budget)} budget"',
    ]


def render_rules(budgets: Budgets) -> list[str]:
    """The generated block of alerts.yml, markers included."""
    policy = budgets.alerts
    lines = [BEGIN, f"      # {policy.quantile} latency budgets per funnel stage, as the gateway sees them."]
    for stage, budget in budgets.stages.items():
        lines += _rule(
            stage.capitalize(),
            stage,
            f'stage="{stage}"',
            "ragmesh_stage_duration_seconds",
            budget.get(policy.quantile),
            policy,
        )
    lines.append(f"      # {policy.quantile} end to end at the gateway, what the caller waits for.")
    for rpc, budget in budgets.rpcs.items():
        lines += _rule(
            rpc,
            rpc,
            f'service="{GATEWAY_SERVICE}",method="{rpc}"',
            "ragmesh_rpc_duration_seconds",
            budget.get(policy.quantile),
            policy,
        )
    return [*lines, END]


def _split(text: str) -> tuple[list[str], list[str], list[str]]:
    lines = text.splitlines()
    try:
        start, stop = lines.index(BEGIN), lines.index(END)
    except ValueError:
        raise ValueError(f"{ALERTS_FILE.name} lacks the latency-budget markers ({BEGIN.strip()!r} ... END)") from None
    return lines[:start], lines[start : stop + 1], lines[stop + 1 :]


def drift(budgets: Budgets, alerts_text: str) -> list[str]:
    """Rule lines that differ between alerts.yml and budgets.yaml (empty when they agree)."""
    _, current, _ = _split(alerts_text)
    wanted = render_rules(budgets)
    if current == wanted:
        return []
    return list(difflib.unified_diff(current, wanted, "alerts.yml", "budgets.yaml", lineterm=""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="loadtest.budgets", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("check", "write"))
    parser.add_argument("--budgets", type=Path, default=BUDGETS_FILE)
    parser.add_argument("--alerts", type=Path, default=ALERTS_FILE)
    args = parser.parse_args(argv)
    budgets = load(args.budgets)
    text = args.alerts.read_text()
    if args.action == "write":
        head, _, tail = _split(text)
        args.alerts.write_text("\n".join([*head, *render_rules(budgets), *tail]) + "\n")
        return 0
    differences = drift(budgets, text)
    if differences:
        print(f"{args.alerts} disagrees with {args.budgets} (run `make alerts`):", file=sys.stderr)
        print("\n".join(differences), file=sys.stderr)
        return 1
    unbounded = off_bucket(budgets)
    if unbounded:
        print(
            f"{args.budgets}: not a bucket boundary of the latency histograms (shared/observability/metrics.py "
            f"LATENCY_BUCKETS), so quantiles there are interpolated: {'; '.join(unbounded)}",
            file=sys.stderr,
        )
        return 1
    print(f"{args.alerts.name}: latency-budget rules match {args.budgets.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
