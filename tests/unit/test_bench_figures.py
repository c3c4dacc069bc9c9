"""The benchmarks' figure file: merged run to run, one entry per name and configuration."""

import json

from loadtest.figures import figure, record


def test_figures_merge_by_name_and_configuration(tmp_path):
    path = tmp_path / "bench.json"
    record([figure("rerank.p95", 31.25, "ms", path="raw"), figure("rerank.p95", 40.0, "ms", path="service")], path)
    record([figure("rerank.p95", 29.0, "ms", path="raw"), figure("retrieval.p95", 9.5, "ms", chunks=100_000)], path)
    entries = json.loads(path.read_text())
    by_key = {(e["name"], e["config"].get("path") or e["config"].get("chunks")): e for e in entries}
    assert len(entries) == 3
    assert by_key[("rerank.p95", "raw")]["value"] == 29.0  # the newer run replaced the older figure
    assert by_key[("rerank.p95", "service")]["value"] == 40.0  # another configuration's figure stayed
    assert by_key[("retrieval.p95", 100_000)]["unit"] == "ms"
    for entry in entries:
        assert set(entry) == {"name", "value", "unit", "config", "measured_at"}
        assert entry["config"]["cpus"] >= 1
