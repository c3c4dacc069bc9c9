"""Every alert has a promtool unit test, and the dashboard only charts metrics ragmesh exports."""

import json
import re
from pathlib import Path

import yaml
from prometheus_client.metrics import MetricWrapperBase

from shared.observability import metrics

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "observability"


def exported_names() -> set[str]:
    names = set()
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            for family in value.describe():
                names |= {family.name, f"{family.name}_total", f"{family.name}_bucket", f"{family.name}_count",
                          f"{family.name}_sum"}
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
