"""The shipped scrape config and alert rules, run by a real Prometheus (Debian's `prometheus` package, which
`make promtool` installs) against the real mesh: a per-stage latency budget made deliberately tiny must go
pending, then firing, once questions are asked. Before the scrape config stopped setting a `stage` target
label, Prometheus renamed the metric's own `stage` to `exported_stage` and these alerts could never fire."""

import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from services.cli.mesh import free_port
from shared.config import DEFAULT_METRICS_PORTS, STAGES
from shared.stubs import gateway_pb2
from tests.support.mesh import TENANT

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


def api(base: str, path: str, **params) -> dict:
    url = f"{base}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
    with urllib.request.urlopen(url, timeout=5) as reply:
        body = json.load(reply)
    assert body["status"] == "success", body
    return body["data"]


@pytest.fixture
def prometheus(mesh, tmp_path):
    binary = shutil.which("prometheus")
    assert binary, "Prometheus is not installed: `make promtool` installs Debian's prometheus package"
    rules = tmp_path / "alerts.yml"
    rules.write_text(yaml.safe_dump(tiny_budget_rules(), sort_keys=False))
    config = tmp_path / "prometheus.yml"
    config.write_text(yaml.safe_dump(scrape_config(mesh, rules), sort_keys=False))
    check = subprocess.run(["promtool", "check", "config", str(config)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    port = free_port()
    log = open(tmp_path / "prometheus.log", "wb")
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "prometheus.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "Prometheus not ready in 60 s"
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


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
