"""Every alert has a promtool unit test, and the dashboard only charts metrics ragmesh exports."""

import json
import re
from pathlib import Path

import yaml
from prometheus_client.metrics import MetricWrapperBase

from services.cli.mesh import SCRAPE_TARGETS_FILE, Mesh
from shared.observability import metrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "observability"


def exported_names() -> set[str]:
    names = set()
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            for family in value.describe():
                names |= {
                    family.name,
                    f"{family.name}_total",
                    f"{family.name}_bucket",
                    f"{family.name}_count",
                    f"{family.name}_sum",
                }
    return names


def test_every_alert_rule_is_unit_tested():
    rules = {r["alert"] for g in yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"] for r in g["rules"]}
    tests = yaml.safe_load((DEPLOY / "alerts_test.yml").read_text())["tests"]
    tested = {t["alertname"] for case in tests for t in case["alert_rule_test"]}
    assert rules == tested


def test_rules_and_dashboard_use_only_exported_metrics():
    exported = exported_names()
    texts = [(DEPLOY / "alerts.yml").read_text(), (DEPLOY / "grafana-dashboard.json").read_text()]
    used = {m for t in texts for m in re.findall(r"\bragmesh_[a-z_]+", t)}
    assert used and used <= exported, used - exported
    json.loads(texts[1])


# Labels Prometheus itself puts on every series or reads from histograms and summaries.
RESERVED = {"le", "quantile"}


def metric_label_names() -> set[str]:
    """Every label name a ragmesh process exports: ragmesh's own metrics and the client's default collectors."""
    from prometheus_client import REGISTRY

    names = set(RESERVED)
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            names |= set(value._labelnames)
    for family in REGISTRY.collect():
        for sample in family.samples:
            names |= set(sample.labels)
    return names


def scrape_label_names(config: dict) -> set[str]:
    """Label names the scrape config attaches to scraped series: static and file-discovered target labels
    and relabelling targets."""
    names = set()
    for job in config.get("scrape_configs", []):
        for static in job.get("static_configs", []):
            names |= set(static.get("labels") or {})
        for key in ("relabel_configs", "metric_relabel_configs"):
            for rule in job.get(key) or []:
                if rule.get("action", "replace") == "replace" and "target_label" in rule:
                    names.add(rule["target_label"])
    names |= set((config.get("global") or {}).get("external_labels") or {})
    return names


def test_scrape_config_sets_no_label_a_ragmesh_metric_uses():
    """A target label named like a metric's own label renames the metric's (to exported_<name>), and every
    query on it, such as the per-stage latency alerts' {stage="retrieve"}, silently matches nothing."""
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    assert "stage" in metric_label_names()
    collisions = scrape_label_names(config) & metric_label_names()
    assert not collisions, f"prometheus.yml sets label(s) {sorted(collisions)} that ragmesh metrics use"


def test_collision_check_sees_a_stage_target_label():
    config = {
        "scrape_configs": [
            {
                "job_name": "x",
                "static_configs": [{"targets": ["a:1"], "labels": {"stage": "g"}}],
                "relabel_configs": [{"target_label": "service", "replacement": "x"}],
            }
        ]
    }
    assert scrape_label_names(config) & metric_label_names() == {"stage", "service"}


def test_the_launchers_scrape_targets_set_no_label_a_ragmesh_metric_uses(tmp_path):
    """`ragmesh up` writes every process's target (replicas included) for file_sd: the same rule holds."""
    mesh = Mesh(str(tmp_path), replicas={"retriever": 2})
    targets = json.loads(Path(mesh.write_scrape_targets(9476)).read_text())
    names = {name for entry in targets for name in entry["labels"]}
    assert names == {"component"} and not names & metric_label_names()
    by_target = {entry["targets"][0]: entry["labels"]["component"] for entry in targets}
    assert len(by_target) == len(mesh.stage_names()) + 1
    assert by_target[f"127.0.0.1:{mesh.metrics_ports['retriever-2']}"] == "retriever"
    assert by_target["127.0.0.1:9476"] == "launcher"
    assert list(tmp_path.iterdir()) == [tmp_path / SCRAPE_TARGETS_FILE]  # no partial file left beside it
