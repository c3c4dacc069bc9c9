"""A private mesh for a load test: started on free loopback ports (embedded index by default, OpenSearch or the
Triton reranker on request), the scenario's corpus ingested into one tenant, and what ghz needs to call it."""

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from loadtest import corpus
from loadtest.scenario import Scenario
from services.cli.mesh import ROOT_DIR, Mesh, free_port
from shared.config import STAGES
from shared.index.factory import DEFAULT_OPENSEARCH_URL, open_index
from shared.stubs import gateway_pb2, gateway_pb2_grpc

TENANT = "loadtest"
OPENSEARCH_UP = Path(ROOT_DIR, "deploy", "opensearch", "up.sh")
OPENSEARCH_DOWN = Path(ROOT_DIR, "deploy", "opensearch", "down.sh")


def log(message: str) -> None:
    print(f"[loadtest] {message}", file=sys.stderr, flush=True)


def opensearch_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False


class LoadMesh:
    def __init__(self, scenario: Scenario, data_dir: str, backend: str, reranker: str, scifact: Path):
        self.scenario, self.backend, self.reranker_kind, self.scifact = scenario, backend, reranker, scifact
        self.opensearch_url = os.environ.get("OPENSEARCH_URL", DEFAULT_OPENSEARCH_URL)
        self.triton = None
        env = {
            # A load test measures capacity: the per-key rate limit (50/s by default) would measure the limiter.
            "RAGMESH_GATEWAY_RATE_LIMIT_PER_SECOND": "0",
            "RAGMESH_INDEX": backend,
        }
        if backend == "opensearch":
            digest = hashlib.sha256(data_dir.encode()).hexdigest()[:8]
            env.update({"OPENSEARCH_URL": self.opensearch_url, "RAGMESH_OPENSEARCH_PREFIX": f"loadtest-{digest}"})
        self.extra_env = env
        self.mesh = Mesh.on_free_ports(data_dir, extra_env=env)
        self.questions: list[str] = []
        self.ingest_seconds = 0.0
        self.documents = 0
        self.chunks = 0

    # ---- set-up -------------------------------------------------------------------------------------

    def start_triton(self) -> None:
        """The cross-encoder served by tritonserver (`make triton-install reranker`); the reranker stage uses it."""
        from services.reranker.triton_server import TritonServer, rerankers_root

        self.triton = TritonServer(
            rerankers_root() / "sample" / "triton",
            free_port(),
            free_port(),
            free_port(),
            log_path=Path(self.mesh.log_dir) / "tritonserver.log",
        )
        self.triton.start(timeout=180)
        self.extra_env.update(
            {
                "RAGMESH_RERANKER_MODEL": "triton",
                "RAGMESH_RERANKER_TRITON_ADDRESS": self.triton.grpc_address,
                # The shipped calibration is for the default reranker; the gateway refuses a mismatched one.
                "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
            }
        )

    def start(self) -> None:
        if self.backend == "opensearch" and not opensearch_answers(self.opensearch_url):
            raise SystemExit(f"no OpenSearch answers on {self.opensearch_url}: run `make opensearch-up` first")
        if self.reranker_kind == "triton":
            self.start_triton()
        started = time.monotonic()
        self.mesh.start(timeout=300)
        log(f"mesh ({self.backend} index, {self.reranker_kind} reranker) SERVING in {time.monotonic() - started:.1f}s")
        self.ingest_corpus()

    def ingest_corpus(self) -> None:
        queries = corpus.scifact_queries(self.scifact, self.scenario.scifact_queries) if self.scifact.is_dir() else []
        documents = corpus.example_documents(self.scenario.example_folders) if self.scenario.examples else []
        if self.scenario.scifact_documents and self.scifact.is_dir():
            documents += corpus.scifact_documents(self.scifact, queries, self.scenario.scifact_documents)
        elif self.scenario.scifact_documents:
            log(f"no SciFact at {self.scifact}: examples/ and the labelled questions only")
        self.questions = corpus.interleave(corpus.eval_questions(self.scenario.eval_cases), [q[1] for q in queries])
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
            for i in range(0, len(documents), batch):
                request = gateway_pb2.IngestRequest(tenant_id=tenant, documents=documents[i : i + batch])
                results += list(stub.Ingest(request, timeout=timeout))
        return results

    def stop(self) -> None:
        self.mesh.stop()
        if self.triton is not None:
            self.triton.stop()

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
        return [self.mesh.metrics_url(stage) for stage in stages]

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


def _key(document_id: str, version: str, position: int, body: str) -> tuple[str, str, int, str]:
    return document_id, version, int(position), hashlib.sha256(body.encode()).hexdigest()[:16]


def _embed_model(env: dict[str, str]) -> str:
    from services.retriever.server import RetrieverConfig
    from shared import config

    return config.load(RetrieverConfig, "retriever", env).embed_model


@contextlib.contextmanager
def load_mesh(scenario: Scenario, backend: str, reranker: str, scifact: Path, keep: bool) -> Iterator[LoadMesh]:
    """A started, ingested mesh in a fresh data dir; stopped (and the dir removed unless `keep`) afterwards."""
    data_dir = tempfile.mkdtemp(prefix=f"ragmesh-loadtest-{scenario.name}-")
    harness = LoadMesh(scenario, data_dir, backend, reranker, scifact)
    try:
        harness.start()
        yield harness
    finally:
        harness.stop()
        if keep:
            log(f"data dir and stage logs kept in {data_dir}")
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


def opensearch_control(action: str) -> None:
    """make opensearch-up / -down's scripts (the fault drill stops and starts the node)."""
    script = OPENSEARCH_UP if action == "up" else OPENSEARCH_DOWN
    subprocess.run(["bash", str(script)], check=True)
