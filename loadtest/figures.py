"""Every figure a benchmark prints also goes to `loadtest/out/bench.json`, so runs can be compared by a script.

The file is a list of objects `{name, value, unit, config, measured_at}`. Each benchmark merges its figures in: a
figure replaces an earlier one with the same name and configuration, and figures of other benchmarks stay.
"""

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

BENCH_JSON = Path(__file__).resolve().parent / "out" / "bench.json"


def machine() -> dict[str, Any]:
    """What a figure depends on besides the benchmark's own arguments."""
    return {"cpus": os.cpu_count(), "machine": platform.machine(), "load_average": round(os.getloadavg()[0], 1)}


def figure(name: str, value: float | None, unit: str, **config: Any) -> dict[str, Any]:
    return {"name": name, "value": None if value is None else round(float(value), 4), "unit": unit, "config": config}


def _key(entry: dict[str, Any]) -> str:
    config = {k: v for k, v in entry["config"].items() if k != "load_average"}
    return json.dumps([entry["name"], config], sort_keys=True)


def record(figures: list[dict[str, Any]], path: Path = BENCH_JSON) -> Path:
    """Merge `figures` into the file (atomically: a reader never sees half a file)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    host = machine()
    existing = json.loads(path.read_text()) if path.exists() else []
    merged = {_key(entry): entry for entry in existing}
    for entry in figures:
        entry = {**entry, "config": {**host, **entry["config"]}, "measured_at": stamp}
        merged[_key(entry)] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    scratch = path.with_suffix(".json.tmp")
    scratch.write_text(json.dumps(sorted(merged.values(), key=lambda e: e["name"]), indent=1) + "\n")
    scratch.replace(path)
    return path
