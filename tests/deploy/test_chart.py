"""The Helm chart (deploy/helm/ragmesh) through the same helm and kubeconform that `make check-deploy` runs: the
validator fails on broken manifests with a message naming the problem, and the chart's objects keep the
promises its values make (probes, network exposure, alert rules, environment names)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from shared.config import STAGE_SETTINGS, STAGES, HttpConfig, check_environment, mesh, stage_address

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "deploy" / "helm" / "check.py"
CI_VALUES = ROOT / "deploy" / "helm" / "ragmesh" / "ci"
MTLS_STAGES = [s for s in STAGES if s != "gateway"]


def helm_template(*args: str) -> subprocess.CompletedProcess:
    helm = ROOT / ".tools" / "helm"
    assert helm.exists(), "helm is missing: run `make check-deploy` (it builds .tools/helm)"
    return subprocess.run(
        [
            str(helm),
            "template",
            "ragmesh",
            str(ROOT / "deploy" / "helm" / "ragmesh"),
            "--kube-version",
            "1.34.4",
            *args,
        ],
        capture_output=True,
        text=True,
    )


def validate(manifests: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(CHECK), "validate", "-"], input=manifests, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def full() -> str:
    rendered = helm_template("-f", str(CI_VALUES / "full-values.yaml"))
    assert rendered.returncode == 0, rendered.stderr
    return rendered.stdout


def objects(manifests: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(manifests) if doc]


def named(manifests: str, kind: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in objects(manifests) if o["kind"] == kind}


def test_the_rendered_chart_passes_strict_schema_validation(full):
    done = validate(full)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Invalid: 0, Errors: 0, Skipped: 0" in done.stdout
    kinds = {o["kind"] for o in objects(full)}
    assert {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget", "NetworkPolicy"} <= kinds
    assert {"ServiceMonitor", "PrometheusRule", "PersistentVolumeClaim"} <= kinds


def test_a_port_given_as_a_string_fails_naming_the_field(full):
    broken = full.replace("containerPort: 7073", 'containerPort: "7073"', 1)
    assert broken != full
    done = validate(broken)
    assert done.returncode != 0
    assert "Deployment ragmesh-retriever is invalid" in done.stderr
    assert "/containerPort': got string, want integer" in done.stderr


def test_values_that_produce_an_unknown_field_fail_naming_it():
    rendered = helm_template(
        "-f",
        str(CI_VALUES / "minimal-values.yaml"),
        "--set-json",
        'stages.reranker.resources={"requets": {"cpu": "1"}}',
    )
    assert rendered.returncode == 0, rendered.stderr
    done = validate(rendered.stdout)
    assert done.returncode != 0
    assert "Deployment ragmesh-reranker is invalid" in done.stderr
    assert "additional properties 'requets' not allowed" in done.stderr


def test_a_missing_required_value_fails_naming_it():
    rendered = helm_template("--set", "opensearch.url=http://opensearch:9200", "--set", "tls.existingSecret=t")
    assert rendered.returncode != 0
    assert "apiKeys.existingSecret is required" in rendered.stderr


def test_the_prometheus_rule_is_the_alert_file(full):
    (rule,) = named(full, "PrometheusRule").values()
    alerts = yaml.safe_load((ROOT / "deploy" / "observability" / "alerts.yml").read_text())
    assert rule["spec"]["groups"] == alerts["groups"]


def test_every_stage_is_probed_on_the_grpc_health_service_of_its_health_port(full):
    deployments = named(full, "Deployment")
    for stage in STAGES:
        (container,) = deployments[f"ragmesh-{stage}"]["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        health_port = int(env[f"RAGMESH_{stage.upper()}_HEALTH_PORT"])
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"] == {"port": health_port}, (stage, probe)
        assert env[f"RAGMESH_{stage.upper()}_HOST"] == "0.0.0.0"


def test_only_the_gateway_and_http_front_door_are_open_and_stages_take_only_the_gateway(full):
    policies = named(full, "NetworkPolicy")
    assert set(policies) == {f"ragmesh-{c}" for c in [*STAGES, "http", "triton"]}
    gateway_pods = {"app.kubernetes.io/instance": "ragmesh", "app.kubernetes.io/name": "ragmesh"}
    for stage in MTLS_STAGES:
        (grpc_rule,) = [r for r in policies[f"ragmesh-{stage}"]["spec"]["ingress"] if r["ports"][0]["port"] == "grpc"]
        assert grpc_rule["from"] == [
            {"podSelector": {"matchLabels": {**gateway_pods, "app.kubernetes.io/component": "gateway"}}}
        ], stage
    (triton_grpc,) = [r for r in policies["ragmesh-triton"]["spec"]["ingress"] if r["ports"][0]["port"] == "grpc"]
    assert triton_grpc["from"][0]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == "reranker"
    for front in ("gateway", "http"):
        (open_rule,) = [
            r for r in policies[f"ragmesh-{front}"]["spec"]["ingress"] if r["ports"][0]["port"] != "metrics"
        ]
        assert open_rule["from"][0] == {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}
        }


def container_env(deployment: dict) -> dict[str, str]:
    """The container's environment as the process would see it (a value from a Secret stands in as `secret`)."""
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return {e["name"]: e.get("value", "secret") for e in container["env"]}


def test_every_stage_reads_the_environment_the_chart_gives_it(full):
    """shared/config.py's own check: an unknown RAGMESH_* variable would stop the stage at start-up."""
    deployments = named(full, "Deployment")
    for stage in STAGES:
        env = container_env(deployments[f"ragmesh-{stage}"])
        check_environment(env)
        settings = STAGE_SETTINGS[stage].from_env(env)
        (container,) = deployments[f"ragmesh-{stage}"]["spec"]["template"]["spec"]["containers"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert (settings.host, settings.port, settings.metrics_port, settings.health_port) == (
            "0.0.0.0",
            ports["grpc"],
            ports["metrics"],
            ports["health"],
        ), stage
    http = container_env(deployments["ragmesh-http"])
    check_environment(http)
    assert HttpConfig.from_env(http).host == "0.0.0.0"
    assert mesh(container_env(deployments["ragmesh-indexer"])).index == "opensearch"
    retriever = mesh(container_env(deployments["ragmesh-retriever"]))
    assert (retriever.opensearch_shards, retriever.opensearch_ef_search) == (3, 640)


def test_the_gateway_reaches_every_pod_of_each_stage(full):
    """Through a ClusterIP Service the gateway's one HTTP/2 connection would stay on one pod of a stage, so pods an
    HPA adds would get none of its calls: it is given a dns:/// name of a headless Service selecting the stage's
    pods (shared/clients.py balances round robin over them), and each stage closes connections after a while so
    the name is resolved again."""
    deployments = named(full, "Deployment")
    (container,) = deployments["ragmesh-gateway"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    services = named(full, "Service")
    for stage in MTLS_STAGES:
        pods = services[f"ragmesh-{stage}-pods"]["spec"]
        (grpc_port,) = [p["port"] for p in pods["ports"] if p["name"] == "grpc"]
        assert stage_address(stage, env) == f"dns:///ragmesh-{stage}-pods:{grpc_port}"
        assert pods["clusterIP"] == "None"
        selector = deployments[f"ragmesh-{stage}"]["spec"]["selector"]["matchLabels"]
        assert pods["selector"] == selector
        assert [p["name"] for p in pods["ports"]] == ["grpc"]  # metrics are scraped through the stage's Service
    for stage in STAGES:
        settings = STAGE_SETTINGS[stage].from_env(container_env(deployments[f"ragmesh-{stage}"]))
        assert settings.max_connection_age_seconds == 300, stage
    http = container_env(deployments["ragmesh-http"])
    assert stage_address("gateway", http) == "dns:///ragmesh-gateway-pods:7070"


def test_without_pod_balancing_the_gateway_calls_each_stage_service():
    rendered = helm_template("-f", str(CI_VALUES / "full-values.yaml"), "--set", "gateway.balanceOverPods=false")
    assert rendered.returncode == 0, rendered.stderr
    deployments = named(rendered.stdout, "Deployment")
    (container,) = deployments["ragmesh-gateway"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    services = named(rendered.stdout, "Service")
    for stage in MTLS_STAGES:
        (grpc_port,) = [p["port"] for p in services[f"ragmesh-{stage}"]["spec"]["ports"] if p["name"] == "grpc"]
        assert stage_address(stage, env) == f"ragmesh-{stage}:{grpc_port}"
        assert f"ragmesh-{stage}-pods" not in services
    assert (
        STAGE_SETTINGS["retriever"].from_env(container_env(deployments["ragmesh-retriever"])).max_connection_age_seconds
        == 0
    )


def test_service_monitor_keeps_the_metrics_own_labels_and_names_the_component(full):
    """The operator labels every target with `service`, a label ragmesh_rpc_* use themselves (RagmeshErrorRate
    groups by it): honorLabels keeps the metric's, as deploy/observability/prometheus.yml avoids such labels."""
    (monitor,) = named(full, "ServiceMonitor").values()
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["honorLabels"] is True and endpoint["port"] == "metrics"
    assert {"targetLabel": "component"}.items() <= endpoint["relabelings"][0].items()
    services = [s for s in named(full, "Service").values() if any(p["name"] == "metrics" for p in s["spec"]["ports"])]
    assert {s["metadata"]["labels"]["app.kubernetes.io/component"] for s in services} == {*STAGES, "triton"}
