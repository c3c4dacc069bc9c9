"""The regression gate: headline metrics may not be worse than the committed baseline by more than
`tolerance` (absolute, 0.02 = 2 points)."""

import json
from pathlib import Path

LOWER_IS_BETTER = {"false_answer_rate", "over_abstention_rate", "wrong_answer_rate", "near_miss_answer_rate"}


def compare(current: dict, baseline: dict, metrics, tolerance: float = 0.02) -> list[str]:
    """One message per regressed metric; empty when the gate passes."""
    failures = []
    for name in metrics:
        base, now = baseline.get(name), current.get(name)
        if base is None:
            continue
        if now is None:
            failures.append(f"{name}: missing from this run (baseline {base:.3f})")
            continue
        delta = (base - now) if name in LOWER_IS_BETTER else (now - base)
        if delta < -tolerance - 1e-9:
            failures.append(
                f"{name} regressed from {base:.3f} to {now:.3f} "
                f"({abs(delta) * 100:.1f} points worse; allowed {tolerance * 100:.1f})"
            )
    return failures


def load_baseline(path: str) -> dict:
    return json.loads(Path(path).read_text())["metrics"]


def write_baseline(path: str, report: dict, metrics, reason: str) -> None:
    data = {"reason": reason, "source": report["meta"], "metrics": {k: report["overall"].get(k) for k in metrics}}
    Path(path).write_text(json.dumps(data, indent=2) + "\n")
