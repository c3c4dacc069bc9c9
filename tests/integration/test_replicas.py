"""A stage run as several processes (`ragmesh up --replicas retriever=2`), for real: the gateway spreads its calls
over the replicas, a replica killed under load costs no Ask, and an erasure reaches every replica's memory. The
mesh runs with mutual TLS on, since a replica list is reached under an authority of its own (shared/clients.py)."""

import json
import signal
import threading
import time

import grpc
import pytest

from loadtest import metrics
from services.cli.mesh import Mesh
from shared.stubs import gateway_pb2
from shared.stubs import gateway_pb2_grpc as gateway_grpc
from shared.tls import TLS_ENV, make_certs
from tests.support.mesh import TENANT, ingest_paths
from tests.support.prometheus import api, running_prometheus

pytestmark = [pytest.mark.integration, pytest.mark.slow]

QUESTIONS = ("what is the retention codename", "who owns the archive", "how long are logs kept", "backup region")


@pytest.fixture(scope="module")
def replicated(tmp_path_factory):
    certs = make_certs(tmp_path_factory.mktemp("certs"))
    mesh = Mesh.on_free_ports(
        str(tmp_path_factory.mktemp("mesh-replicas")),
        # Asks over a two-note corpus outrun a key's default rate limit; the drill is about replicas, not limits.
        extra_env={TLS_ENV: str(certs), "RAGMESH_GATEWAY_RATE_LIMIT_PER_SECOND": "10000"},
        replicas={"retriever": 2, "reranker": 2},
    )
    mesh.start(timeout=240)
    notes = tmp_path_factory.mktemp("notes")
    (notes / "retention.md").write_text(
        "# Retention\n\nThe retention codename is Heron.\n\n## Logs\n\nLogs are kept for 30 days.\n"
    )
    (notes / "archive.md").write_text(
        "# Archive\n\nThe archive is owned by the platform team. Backups stay in eu-west.\n"
    )
    with mesh.gateway_channel() as channel:
        gateway = gateway_grpc.GatewayStub(channel)
        assert all(r.ok for r in ingest_paths(gateway, TENANT, [str(notes)]))
        yield mesh, gateway
    mesh.stop()


def calls(mesh, name: str, method: str) -> float:
    snapshot = metrics.scrape([mesh.metrics_url(name)], timeout=10)
    return sum(
        v
        for (n, labels), v in snapshot.items()
        if n == "ragmesh_rpc_duration_seconds_count" and dict(labels).get("method") == method
    )


def test_the_gateway_reaches_each_stage_as_a_list_of_its_replicas(replicated):
    mesh, _ = replicated
    assert mesh.stage_names(("retriever",)) == ["retriever", "retriever-2"]
    assert mesh.env()["RAGMESH_RETRIEVER_ADDR"] == f"{mesh.address('retriever')},{mesh.address('retriever-2')}"
    assert mesh.address("retriever") != mesh.address("retriever-2")
    assert len({p.pid for p in mesh.processes.values()}) == 8


def test_asks_are_spread_over_the_replicas(replicated):
    mesh, gateway = replicated
    names = {"Retrieve": mesh.stage_names(("retriever",)), "Rerank": mesh.stage_names(("reranker",))}
    before = {m: [calls(mesh, n, m) for n in ns] for m, ns in names.items()}
    asks = 12
    for n in range(asks):
        gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=QUESTIONS[n % len(QUESTIONS)]), timeout=60)
    for method, processes in names.items():
        served = [calls(mesh, n, method) - b for n, b in zip(processes, before[method], strict=True)]
        assert sum(served) == asks, (method, served)
        # Round robin: each replica takes its share, give or take the odd call.
        assert all(s >= asks / 2 - 2 for s in served), (method, served)


def test_a_killed_retriever_replica_costs_no_ask(replicated):
    mesh, gateway = replicated
    outcomes: dict[str, int] = {}
    stop = time.monotonic() + 6
    lock = threading.Lock()

    def ask_until_stopped(n: int) -> None:
        while time.monotonic() < stop:
            request = gateway_pb2.AskRequest(tenant_id=TENANT, question=QUESTIONS[n % len(QUESTIONS)])
            try:
                gateway.Ask(request, timeout=30)
                outcome = "OK"
            except grpc.RpcError as err:
                outcome = f"{err.code().name}: {err.details()}"
            with lock:
                outcomes[outcome] = outcomes.get(outcome, 0) + 1

    workers = [threading.Thread(target=ask_until_stopped, args=(n,)) for n in range(3)]
    for worker in workers:
        worker.start()
    time.sleep(2)
    mesh.signal_stage("retriever-2", signal.SIGKILL)
    for worker in workers:
        worker.join()
    assert set(outcomes) == {"OK"}, outcomes
    # After the kill, the survivor answered alone: Asks went on.
    assert outcomes["OK"] > 3
    mesh.start_stage("retriever-2")
    mesh.wait_serving(180, ["retriever-2"])
    before = calls(mesh, "retriever-2", "Retrieve")
    deadline = time.monotonic() + 30  # the gateway's channel reconnects to it within its backoff
    while calls(mesh, "retriever-2", "Retrieve") == before and time.monotonic() < deadline:
        gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=QUESTIONS[0]), timeout=30)
    assert calls(mesh, "retriever-2", "Retrieve") > before, "the restarted replica was never called again"


def test_an_erasure_reaches_every_replica(replicated):
    mesh, gateway = replicated
    for question in QUESTIONS:  # every replica has a view of the tenant and cached chunks to drop
        gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=question), timeout=60)
    reply = gateway.Erase(gateway_pb2.EraseRequest(tenant_id=TENANT, document_id="archive.md"), timeout=120)
    report = json.loads(reply.report_json)
    assert reply.verified, report
    where = {s["store"]: set() for s in report["stores"]}
    for store in report["stores"]:
        where[store["store"]].add(store["location"])
    assert where["retriever:memory"] == {mesh.address(n) for n in mesh.stage_names(("retriever",))}
    assert where["reranker:cache"] == {mesh.address(n) for n in mesh.stage_names(("reranker",))}
    dropped = [s["removed"] for s in report["stores"] if s["store"] == "retriever:memory"]
    assert dropped == [1, 1], report["stores"]


def test_prometheus_scrapes_every_replica_from_the_launchers_targets(replicated, tmp_path):
    """The file `ragmesh up` writes for Prometheus' file_sd lists every process, so a real Prometheus scrapes both
    retrievers and both rerankers, each labelled with its stage."""
    mesh, _ = replicated
    targets_file = mesh.write_scrape_targets()
    config = {
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [{"job_name": "ragmesh", "file_sd_configs": [{"files": [targets_file]}]}],
    }
    with running_prometheus(config, tmp_path) as base:
        deadline = time.monotonic() + 30
        while True:
            targets = api(base, "/api/v1/targets")["activeTargets"]
            if len(targets) == len(mesh.stage_names()) and all(t["health"] == "up" for t in targets):
                break
            assert time.monotonic() < deadline, [(t["scrapeUrl"], t["health"], t.get("lastError")) for t in targets]
            time.sleep(0.5)
        up = api(base, "/api/v1/query", query='count by (component) (up{job="ragmesh"} == 1)')["result"]
    counts = {r["metric"]["component"]: int(r["value"][1]) for r in up}
    assert counts == {"chunker": 1, "indexer": 1, "retriever": 2, "reranker": 2, "generator": 1, "gateway": 1}
