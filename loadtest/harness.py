"""A private mesh for a load test: started on free loopback ports (embedded index by default, OpenSearch or the
Triton reranker on request), the scenario's corpus ingested into one tenant, and what ghz needs to call it."""

import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from loadtest import corpus, metrics, snapshot
from loadtest.scenario import Scenario
from services.cli.mesh import ROOT_DIR, Mesh, free_port
from shared.config import STAGES
from shared.index.factory import DEFAULT_OPENSEARCH_URL, open_index
from shared.stubs import gateway_pb2, gateway_pb2_grpc

TENANT = "loadtest"
OPENSEARCH_UP = Path(ROOT_DIR, "deploy", "opensearch", "up.sh")
OPENSEARCH_DOWN = Path(ROOT_DIR, "deploy", "opensearch", "down.sh")
OPENSEARCH_PAIR = Path(ROOT_DIR, "deploy", "opensearch", "pair.sh")


def log(message: str) -> None:
    print(f"[loadtest] {message}", file=sys.stderr, flush=True)


def opensearch_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


def free_port_pair() -> int:
    """A port p with p + 1 free as well (the two-node cluster's second node takes the next port)."""
    while True:
        port = free_port()
        with contextlib.suppress(OSError), socket.socket() as sock:
            sock.bind(("127.0.0.1", port + 1))
            return port


class PrivateOpenSearch:
    """OpenSearch of this load test's own (make opensearch-up's scripts with other ports and root), for drills that
    stop it: a node other work uses (make test's, on 9200) is never stopped. Two nodes (deploy/opensearch/pair.sh)
    for the node-loss drill."""

    def __init__(self, nodes: int):
        self.nodes = nodes
        self.port = free_port_pair()
        self.env = {
            **os.environ,
            "OPENSEARCH_PORT": str(self.port),
            "OPENSEARCH_TRANSPORT_PORT": str(free_port_pair()),
            "OPENSEARCH_NODES": str(nodes),
            "RAGMESH_OPENSEARCH_ROOT": f"/var/lib/ragmesh-opensearch-loadtest-{nodes}",
        }
        self.url = f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        subprocess.run(["bash", str(OPENSEARCH_UP)], check=True, env=self.env)

    def down(self) -> None:
        subprocess.run(["bash", str(OPENSEARCH_DOWN)], check=True, env=self.env)

    def remove_data(self) -> None:
        """After the run: the nodes' data (the server itself stays installed for the next run)."""
        root = Path(self.env["RAGMESH_OPENSEARCH_ROOT"])
        for data in (root / "data", root / "node-1" / "data", root / "node-2" / "data"):
            shutil.rmtree(data, ignore_errors=True)

    def node(self, action: str, number: int) -> None:
        """pair.sh kill N / start N (start waits until the cluster is green)."""
        subprocess.run(["bash", str(OPENSEARCH_PAIR), action, str(number)], check=True, env=self.env)


class LoadMesh:
    def __init__(
        self,
        scenario: Scenario,
        data_dir: str,
        backend: str,
        reranker: str,
        scifact: Path,
        use_snapshot: bool = True,
        replicas: dict[str, int] | None = None,
    ):
        self.scenario, self.backend, self.reranker_kind, self.scifact = scenario, backend, reranker, scifact
        self.use_snapshot = use_snapshot
        self.ingest_cached = ""  # the snapshot key when the index came from the cache
        # A drill that stops OpenSearch gets a node of its own; otherwise the one at OPENSEARCH_URL serves.
        drills = {"opensearch", "opensearch-node"} & set(_faults(scenario)) if backend == "opensearch" else set()
        self.private_opensearch = PrivateOpenSearch(2 if "opensearch-node" in drills else 1) if drills else None
        self.opensearch_url = (
            self.private_opensearch.url
            if self.private_opensearch
            else os.environ.get("OPENSEARCH_URL", DEFAULT_OPENSEARCH_URL)
        )
        self.triton = None
        self.reranker_runtime = ""  # where Triton's instance runs the model, when Triton serves it
        env = {
            # A load test measures capacity: the per-key rate limit (50/s by default) would measure the limiter.
            "RAGMESH_GATEWAY_RATE_LIMIT_PER_SECOND": "0",
            "RAGMESH_INDEX": backend,
        }
        if backend == "opensearch":
            digest = hashlib.sha256(data_dir.encode()).hexdigest()[:8]
            env.update({"OPENSEARCH_URL": self.opensearch_url, "RAGMESH_OPENSEARCH_PREFIX": f"loadtest-{digest}"})
            if self.private_opensearch and self.private_opensearch.nodes == 2:
                env["RAGMESH_OPENSEARCH_REPLICAS"] = "1"  # each shard on both nodes
        self.extra_env = env
        self.mesh = Mesh.on_free_ports(data_dir, extra_env=env, replicas=replicas)
        self.questions: list[str] = []
        self.ingest_seconds = 0.0
        self.documents = 0
        self.chunks = 0

    # ---- set-up -------------------------------------------------------------------------------------

    def start_triton(self) -> None:
        """The cross-encoder served by tritonserver (`make triton-install reranker`); the reranker stage uses it."""
        from services.reranker.training.command import install_into_triton
        from services.reranker.triton_server import MODEL_NAME, TritonServer, rerankers_root

        trained = rerankers_root() / "sample"
        repository = trained / "triton"
        if not (repository / MODEL_NAME / "1" / "model.onnx").is_file():
            # A trained model without its Triton repository (e.g. retrained by a variant run): this run's own,
            # with the checkpoint when there is one (a GPU instance runs it with torch; a GPU host may hold
            # the checkpoint alone).
            with_torch = (trained / "checkpoint" / "config.json").is_file()
            repository = install_into_triton(trained, Path(self.mesh.data_dir) / "triton", with_torch).parent
        self.triton = TritonServer(
            repository,
            free_port(),
            free_port(),
            free_port(),
            log_path=Path(self.mesh.log_dir) / "tritonserver.log",
        )
        self.triton.start(timeout=180)
        self.reranker_runtime = self.triton.runtime()  # read from Triton's log once, for the log and the report
        log(f"Triton serves the cross-encoder on {self.reranker_runtime}")
        self.extra_env.update(
            {
                "RAGMESH_RERANKER_MODEL": "triton",
                "RAGMESH_RERANKER_TRITON_ADDRESS": self.triton.grpc_address,
                # The shipped calibration is for the default reranker; the gateway refuses a mismatched one.
                "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
            }
        )

    def start(self) -> None:
        if self.private_opensearch:
            log(f"starting a private OpenSearch node on {self.opensearch_url} for the stop/start drill")
            self.private_opensearch.up()
        if self.backend == "opensearch" and not opensearch_answers(self.opensearch_url):
            raise SystemExit(f"no OpenSearch answers on {self.opensearch_url}: run `make opensearch-up` first")
        if self.reranker_kind == "triton":
            self.start_triton()
        documents = self.plan_corpus()
        # The embedded index of this corpus, code and settings, from an earlier run (loadtest/snapshot.py).
        cache_key = snapshot.key(documents, TENANT, self.mesh.env()) if self.backend == "embedded" else ""
        restored = snapshot.restore(self.mesh.data_dir, cache_key) if cache_key and self.use_snapshot else None
        started = time.monotonic()
        self.mesh.start(timeout=300)
        log(f"mesh ({self.backend} index, {self.reranker_kind} reranker) SERVING in {time.monotonic() - started:.1f}s")
        if restored is not None:
            self.documents, self.chunks = restored["documents"], restored["chunks"]
            self.ingest_seconds, self.ingest_cached = restored["ingest_s"], cache_key
            log(
                f"index snapshot {cache_key} restored: {self.documents} documents ({self.chunks} chunks; "
                f"ingesting them took {self.ingest_seconds:.1f}s when it was made)"
            )
            return
        self.ingest_corpus(documents)
        if cache_key:
            saved = snapshot.save(
                self.mesh.data_dir,
                cache_key,
                {"documents": self.documents, "chunks": self.chunks, "ingest_s": self.ingest_seconds},
            )
            log(f"index snapshot saved in {saved}")

    def plan_corpus(self) -> list:
        """The scenario's documents; sets the questions (labelled ones interleaved with SciFact queries)."""
        queries = corpus.scifact_queries(self.scifact, self.scenario.scifact_queries) if self.scifact.is_dir() else []
        documents = corpus.example_documents(self.scenario.example_folders) if self.scenario.examples else []
        if self.scenario.scifact_documents and self.scifact.is_dir():
            documents += corpus.scifact_documents(self.scifact, queries, self.scenario.scifact_documents)
        elif self.scenario.scifact_documents:
            log(f"no SciFact at {self.scifact}: examples/ and the labelled questions only")
        self.questions = corpus.interleave(corpus.eval_questions(self.scenario.eval_cases), [q[1] for q in queries])
        return documents

    def ingest_corpus(self, documents: list) -> None:
        started = time.monotonic()
        results = self.ingest(documents, TENANT)
        failed = [r for r in results if not r.ok]
        if failed:
            raise SystemExit(f"ingest failed for {len(failed)} documents: {failed[0].document_id}: {failed[0].error}")
        self.ingest_seconds = time.monotonic() - started
        self.documents = len(documents)
        self.chunks = sum(r.chunks_written + r.chunks_unchanged for r in results)
        log(f"ingested {len(documents)} documents ({self.chunks} chunks) in {self.ingest_seconds:.1f}s")

    def ingest(self, documents: list, tenant: str, batch: int = 16, timeout: float = 600.0) -> list:
        results = []
        with self.mesh.gateway_channel() as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            started = time.monotonic()
            for i in range(0, len(documents), batch):
                request = gateway_pb2.IngestRequest(tenant_id=tenant, documents=documents[i : i + batch])
                results += list(stub.Ingest(request, timeout=timeout))
                if len(documents) >= 1000 and (i // batch) % 32 == 31:  # a long ingest says how far it is
                    log(f"  ingested {len(results)}/{len(documents)} documents in {time.monotonic() - started:.0f}s")
        return results

    def stop(self) -> None:
        self.mesh.stop()
        if self.triton is not None:
            self.triton.stop()
        if self.private_opensearch:
            self.private_opensearch.down()
            self.private_opensearch.remove_data()

    # ---- what a load needs ----------------------------------------------------------------------------

    @property
    def address(self) -> str:
        return self.mesh.address("gateway")

    @property
    def api_key(self) -> str:
        return self.mesh.key_for(TENANT)

    def messages(self, rpc: str) -> list[dict]:
        """JSON forms of the requests ghz cycles through."""
        field = "question" if rpc == "Ask" else "query"
        return [{"tenant_id": TENANT, field: q} for q in self.questions]

    def metrics_urls(self, stages=STAGES) -> list[str]:
        """Every process of these stages (each replica's), so a scrape sums what all of them did."""
        return [self.mesh.metrics_url(name) for name in self.mesh.stage_names(stages)]

    def metrics_urls_by_stage(self, stages=STAGES) -> dict[str, list[str]]:
        """Per stage, the endpoints of its processes: what one stage did, apart from the others."""
        return {stage: self.metrics_urls((stage,)) for stage in stages}

    def read_metrics(self) -> tuple[metrics.Snapshot, dict[str, float]]:
        """Every stage's metrics (summed over the mesh) and the CPU seconds so far of each stage's processes and
        of ghz (this process's children once waited for: on one machine the load generator's CPU is taken from
        the mesh), from one scrape of each endpoint."""
        by_stage = metrics.scrape_by_stage(self.metrics_urls_by_stage())
        times = os.times()
        cpu = {**metrics.cpu_seconds(by_stage), metrics.LOAD_GENERATOR: times.children_user + times.children_system}
        return metrics.merged(by_stage.values()), cpu

    def chunk_set(self, tenant: str) -> set[tuple[str, str, int, str]]:
        """(document id, version, position, body digest) of every chunk the tenant has in the index: what an
        ingest left behind, comparable across tenants (chunk ids include the tenant)."""
        env = self.mesh.env()
        index = open_index(self.backend, self.mesh.data_dir, env=env, embed_model=_embed_model(env))
        out = set()
        if self.backend == "embedded":
            for _meta, chunks, _vectors in index.export(tenant):
                out |= {_key(c.meta.document_id, c.meta.version, c.position, c.body) for c in chunks}
        else:
            index.client.indices.refresh(index=index.index)
            for source in index._scan({"term": {"tenant_id": tenant}}, ["document_id", "version", "payload"]):
                payload = source.get("payload", {})
                out.add(_key(source["document_id"], source["version"], payload.get("position", -1), payload["body"]))
        return out


def _faults(scenario: Scenario) -> tuple[str, ...]:
    return scenario.faults.faults if scenario.faults else ()


def _key(document_id: str, version: str, position: int, body: str) -> tuple[str, str, int, str]:
    return document_id, version, int(position), hashlib.sha256(body.encode()).hexdigest()[:16]


def _embed_model(env: dict[str, str]) -> str:
    from services.retriever.server import RetrieverConfig
    from shared import config

    return config.load(RetrieverConfig, "retriever", env).embed_model


@contextlib.contextmanager
def load_mesh(
    scenario: Scenario,
    backend: str,
    reranker: str,
    scifact: Path,
    keep: bool,
    use_snapshot: bool = True,
    replicas: dict[str, int] | None = None,
) -> Iterator[LoadMesh]:
    """A started, ingested mesh in a fresh data dir; stopped (and the dir removed unless `keep`) afterwards."""
    data_dir = tempfile.mkdtemp(prefix=f"ragmesh-loadtest-{scenario.name}-")
    harness = LoadMesh(scenario, data_dir, backend, reranker, scifact, use_snapshot, replicas)
    try:
        harness.start()
        yield harness
    finally:
        harness.stop()
        if keep:
            log(f"data dir and stage logs kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)
