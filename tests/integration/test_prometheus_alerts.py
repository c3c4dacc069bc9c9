"""The shipped scrape config and alert rules, run by a real Prometheus (Debian's `prometheus` package, which
`make promtool` installs) against the real mesh: a per-stage latency budget made deliberately tiny must go
pending, then firing, once questions are asked. Before the scrape config stopped setting a `stage` target
label, Prometheus renamed the metric's own `stage` to `exported_stage` and these alerts could never fire."""

import re
import time
from pathlib import Path

import pytest
import yaml

from shared.config import DEFAULT_METRICS_PORTS, STAGES
from shared.stubs import gateway_pb2
from tests.support.mesh import TENANT
from tests.support.prometheus import api, running_prometheus

pytestmark = pytest.mark.integration

DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "observability"
BUDGET_ALERTS = {
    "RagmeshRetrieveLatencyBudget": "retrieve",
    "RagmeshRerankLatencyBudget": "rerank",
    "RagmeshGenerateLatencyBudget": "generate",
}
TINY_BUDGET = "0.0001"  # 0.1 ms: every real call is over it
FOR = "3s"  # long enough to be seen pending, short enough for the test


def scrape_config(mesh, rules: Path) -> dict:
    """The shipped prometheus.yml, labels and all, with each stage's default metrics port pointed at this
    mesh's (the launcher's target is left out: this mesh has no `ragmesh up`) and 1-second scrape and
    evaluation intervals."""
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    stage_of_port = {str(port): stage for stage, port in DEFAULT_METRICS_PORTS.items()}
    retargeted = set()
    for job in config["scrape_configs"]:
        job["scrape_interval"] = "1s"
        for static in job["static_configs"]:
            targets = []
            for target in static["targets"]:
                stage = stage_of_port.get(target.rsplit(":", 1)[1])
                if stage:
                    targets.append(f"{mesh.host}:{mesh.metrics_ports[stage]}")
                    retargeted.add(stage)
            static["targets"] = targets
        job["static_configs"] = [static for static in job["static_configs"] if static["targets"]]
    assert retargeted == set(STAGES), retargeted
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(rules)]
    return config


def tiny_budget_rules() -> dict:
    """The shipped alerts.yml with each per-stage latency budget replaced by a tiny one and `for` shortened;
    the expressions are otherwise the shipped ones."""
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())
    replaced = set()
    for group in rules["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") in BUDGET_ALERTS:
                rule["expr"], n = re.subn(r">\s*[0-9.]+\s*$", f"> {TINY_BUDGET}", rule["expr"].strip())
                assert n == 1, rule["expr"]
                assert f'stage="{BUDGET_ALERTS[rule["alert"]]}"' in rule["expr"]
                rule["for"] = FOR
                replaced.add(rule["alert"])
    assert replaced == set(BUDGET_ALERTS), replaced
    return rules


@pytest.fixture
def prometheus(mesh, tmp_path):
    rules = tmp_path / "alerts.yml"
    rules.write_text(yaml.safe_dump(tiny_budget_rules(), sort_keys=False))
    with running_prometheus(scrape_config(mesh, rules), tmp_path) as base:
        yield base


def test_per_stage_latency_alerts_fire_in_a_real_prometheus(prometheus, gateway, ingested):
    # Every target scraped, under the shipped labels.
    deadline = time.monotonic() + 30
    while True:
        targets = api(prometheus, "/api/v1/targets")["activeTargets"]
        if len(targets) == len(STAGES) and all(t["health"] == "up" for t in targets):
            break
        assert time.monotonic() < deadline, [(t["scrapeUrl"], t["health"], t.get("lastError")) for t in targets]
        time.sleep(0.5)

    # Ask until every budget alert has been seen pending and then firing (a series first scraped after a
    # question has no rate yet, so questions keep coming while Prometheus watches).
    seen: dict[str, list[str]] = {name: [] for name in BUDGET_ALERTS}
    firing = {}
    last_ask = 0.0
    deadline = time.monotonic() + 90
    while len(firing) < len(BUDGET_ALERTS):
        assert time.monotonic() < deadline, f"alert states seen: {seen}"
        if time.monotonic() - last_ask > 1.0:
            response = gateway.Ask(
                gateway_pb2.AskRequest(tenant_id=TENANT, question="how much is the Team plan per month"), timeout=60
            )
            assert not response.answer.abstained  # so generate runs too
            last_ask = time.monotonic()
        for alert in api(prometheus, "/api/v1/alerts")["alerts"]:
            name = alert["labels"]["alertname"]
            if name in seen:
                if not seen[name] or seen[name][-1] != alert["state"]:
                    seen[name].append(alert["state"])
                if alert["state"] == "firing":
                    firing[name] = alert
        time.sleep(0.2)

    for name, states in seen.items():
        assert states[-2:] == ["pending", "firing"], (name, states)
        assert firing[name]["labels"]["severity"] == "warning"
        assert float(firing[name]["value"]) > float(TINY_BUDGET)
        assert "is over its" in firing[name]["annotations"]["summary"]

    # The metric keeps its own `stage` label: nothing was renamed exported_stage.
    series = api(prometheus, "/api/v1/series", **{"match[]": "ragmesh_stage_duration_seconds_count"})
    assert {"retrieve", "rerank", "generate"} <= {s.get("stage") for s in series}
    assert not [s for s in series if any(k.startswith("exported_") for k in s)], series
    assert {s["component"] for s in series} == {"gateway"}
