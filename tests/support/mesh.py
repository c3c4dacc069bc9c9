"""What the integration tests share besides fixtures: paths, the demo tenant, ingestion, extra stage processes
and the HTTP front door's process."""

import contextlib
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

import grpc

from services.cli import stage_logs
from services.cli.documents import collect_files, to_source_document
from services.cli.mesh import ROOT_DIR, STAGE_UMASK, stage_health
from services.gateway.answer_log import AnswerLog
from shared.credentials import gateway_channel
from shared.keys import local_key
from shared.stubs import gateway_pb2, gateway_pb2_grpc
from shared.tls import TLS_ENV

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
TENANT = "demo"


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    """gRPC metadata presenting an API key."""
    return (("authorization", f"Bearer {token}"),)


def answer_log(data_dir: str) -> AnswerLog:
    """The gateway's answer log file in a mesh's data dir, read as the store it is (tests only: clients go through
    the gateway's ListFeedback)."""
    log = AnswerLog(os.path.join(data_dir, "answers.sqlite"))
    log.warm_up()
    return log


def ingest_paths(gateway, tenant, paths, timeout=300):
    docs = [to_source_document(p, uri) for p, uri in collect_files(paths)]
    return list(gateway.Ingest(gateway_pb2.IngestRequest(tenant_id=tenant, documents=docs), timeout=timeout))


def wait_serving(stage: str, proc: subprocess.Popen, address: str, tls_folder: str, timeout: float) -> None:
    """Until the stage's health check says SERVING (as `Mesh.wait_serving` waits for its own stages); a stage that
    exits first fails at once, naming itself."""
    deadline = time.monotonic() + timeout
    while (status := stage_health(address, stage, tls_folder)) != "SERVING":
        if proc.poll() is not None:
            raise RuntimeError(f"{stage} exited with {proc.returncode} before SERVING on {address}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{stage} not SERVING on {address} after {timeout:.0f} s ({status})")
        time.sleep(0.3)


@contextlib.contextmanager
def extra_stages(stages: list[str], env: dict, port: int, stub=gateway_pb2_grpc.GatewayStub, timeout: float = 180):
    """Extra stage processes (wired by `env` to whatever the test chooses) and a `stub` for the one
    among them listening on `port` (the gateway by default); all stopped by pid afterwards. A gateway
    among them is called with local keys from its data dir. Every stage whose port `env` names
    (RAGMESH_<STAGE>_PORT) is SERVING before the stub is handed out: a gateway can be up before the
    generator it calls has warmed up (a CI failure: the first Ask found the generator refusing connections)."""
    data_dir = env.get("RAGMESH_DATA_DIR", "")
    if "gateway" in stages and data_dir:
        local_key(data_dir, TENANT)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", f"services.{stage}.server"],
            env=env,
            cwd=ROOT_DIR,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for stage in stages
    ]
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    if stub is gateway_pb2_grpc.GatewayStub and data_dir:
        channel = gateway_channel(f"127.0.0.1:{port}", lambda tenant: local_key(data_dir, tenant or TENANT))
    try:
        for stage, proc in zip(stages, procs, strict=True):
            stage_port = int(env.get(f"RAGMESH_{stage.upper()}_PORT", "0"))
            if stage_port:
                wait_serving(stage, proc, f"127.0.0.1:{stage_port}", env.get(TLS_ENV, ""), timeout)
        grpc.channel_ready_future(channel).result(timeout=timeout)
        yield stub(channel)
    finally:
        channel.close()
        for proc in procs:
            proc.terminate()
            proc.wait(30)


def start_front_door(env: dict, port: int, log_path) -> subprocess.Popen:
    """`python -m services.http.server` on 127.0.0.1:port with `env` (which says where the gateway is)."""
    env = {**env, "RAGMESH_HTTP_HOST": "127.0.0.1", "RAGMESH_HTTP_PORT": str(port)}
    with stage_logs.open_for_stage(log_path) as log:  # as the launcher starts it: its files private to the mesh's user
        return subprocess.Popen(
            [sys.executable, "-m", "services.http.server"],
            env=env,
            cwd=ROOT_DIR,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            umask=STAGE_UMASK,
        )


def wait_http(url: str, proc: subprocess.Popen, log_path, timeout: float = 90.0, ready: bool = True) -> None:
    """Until `url`/readyz answers 200 (ready) or at all (not ready: e.g. 503 while its gateway is down)."""
    deadline = time.monotonic() + timeout
    while True:
        assert proc.poll() is None, f"the front door exited:\n{open(log_path).read()[-3000:]}"
        try:
            with urllib.request.urlopen(f"{url}/readyz", timeout=2):
                return
        except urllib.error.HTTPError:
            if not ready:
                return
        except OSError:
            pass
        assert time.monotonic() < deadline, f"{url} not ready:\n{open(log_path).read()[-3000:]}"
        time.sleep(0.3)
