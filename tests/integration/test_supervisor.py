"""`ragmesh up` as a supervisor, run as the real command: a stage killed by pid is restarted on its ports
(counted in ragmesh_stage_restarts_total on the launcher's metrics port) while the other stages keep their
processes, the mesh answers again through the gateway with the local key `up` wrote, and a stage that keeps
dying makes `up` stop the mesh and exit 1."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from prometheus_client.parser import text_string_to_metric_families

from services.cli.documents import collect_files, to_source_document
from services.cli.mesh import ROOT_DIR
from shared.config import STAGES
from shared.credentials import gateway_channel
from shared.stubs import gateway_pb2, gateway_pb2_grpc

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TENANT = "demo"
LINE = re.compile(r"^(\w+)\s+(\S*)\s+pid (\d+)\s+metrics (\S+)")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by `up`) is not alive.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (OSError, IndexError):
        return False


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.3)


def restarts(metrics_address: str) -> dict[str, float]:
    with urllib.request.urlopen(f"http://{metrics_address}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    return {
        s.labels["stage"]: s.value
        for f in text_string_to_metric_families(text)
        if f.name == "ragmesh_stage_restarts"
        for s in f.samples
        if s.name.endswith("_total")
    }


def launch_up(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, Path]:
    """`ragmesh up --free-ports` on a data dir under tmp_path, its output in tmp_path/up.log."""
    out = tmp_path / "up.log"
    command = [sys.executable, "-m", "services.cli.main", "up", "--free-ports", "--data-dir", str(tmp_path / "data")]
    with open(out, "wb") as log:
        up = subprocess.Popen(
            [*command, *args], cwd=ROOT_DIR, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    return up, out


@contextlib.contextmanager
def supervised_mesh(tmp_path: Path, *args: str) -> Iterator[tuple[subprocess.Popen, Path, dict[str, int]]]:
    """`ragmesh up` (launch_up), its output file, and the stage pids the test learns (it fills the dict); at the
    end, `up` is stopped and any of those stages it could not stop is killed by pid."""
    up, out = launch_up(tmp_path, *args)
    pids: dict[str, int] = {}
    try:
        yield up, out, pids
    finally:
        if up.poll() is None:
            up.terminate()
            up.wait(60)
        for pid in pids.values():  # only if `up` could not stop them itself
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def stage_table(up: subprocess.Popen, out: Path) -> dict[str, re.Match]:
    """The lines `up` prints once every stage serves: stage -> (address, pid, metrics address)."""

    def listed():
        assert up.poll() is None, out.read_text()
        text = out.read_text()
        return "export RAGMESH_GATEWAY_ADDR=" in text and text

    table = {m[1]: m for m in (LINE.match(line) for line in wait_for(listed, 300, "up").splitlines()) if m}
    assert set(STAGES) | {"launcher"} <= set(table), table
    return table


def test_a_killed_stage_is_restarted_and_a_stage_that_keeps_dying_stops_up(tmp_path):
    data_dir = tmp_path / "data"
    (tmp_path / "doc.md").write_text("# Plans\n\nThe Team plan costs 49 euros per month per seat.\n")
    with supervised_mesh(tmp_path, "--max-restarts", "2", "--restart-window", "600") as (up, out, pids):
        table = stage_table(up, out)
        pids.update({stage: int(table[stage][3]) for stage in STAGES})
        launcher_metrics = table["launcher"][4]
        channel = gateway_channel(table["gateway"][2], (data_dir / "api-keys" / TENANT).read_text().strip())
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        docs = [to_source_document(p, uri) for p, uri in collect_files([str(tmp_path / "doc.md")])]
        assert all(
            r.ok for r in gateway.Ingest(gateway_pb2.IngestRequest(tenant_id=TENANT, documents=docs), timeout=120)
        )

        def ask():
            try:
                return gateway.Ask(
                    gateway_pb2.AskRequest(tenant_id=TENANT, question="how much is the Team plan"), timeout=30
                )
            except grpc.RpcError as err:
                return err

        first = ask()
        assert isinstance(first, gateway_pb2.AskResponse), first
        assert first.context or first.suggested_reading  # the retriever found the document

        # Kill the retriever: Ask fails while it is down, then it is restarted on its port and answers again.
        os.kill(pids["retriever"], signal.SIGKILL)
        wait_for(lambda: not alive(pids["retriever"]), 10, "the retriever to die")
        text = wait_for(
            lambda: re.search(r"retriever restarted \(pid (\d+)\)", out.read_text()), 60, "the restart to be logged"
        )
        new_pid = int(text[1])
        assert new_pid != pids["retriever"] and alive(new_pid)
        assert re.search(
            rf"retriever \(pid {pids['retriever']}\) exited with code -9 \(failure 1 of at most 2", out.read_text()
        )
        answered = wait_for(lambda: isinstance(r := ask(), gateway_pb2.AskResponse) and r, 120, "Ask to succeed again")
        assert answered.context or answered.suggested_reading
        assert [r.chunk.chunk_id for r in answered.context] == [r.chunk.chunk_id for r in first.context]
        # Every supervised process is counted from 0, the HTTP front door (a seventh process of `up`) too.
        assert restarts(launcher_metrics) == {stage: float(stage == "retriever") for stage in (*STAGES, "http")}
        for stage in set(STAGES) - {"retriever"}:
            assert alive(pids[stage]), f"{stage} lost its process"
        assert up.poll() is None
        pids["retriever"] = new_pid

        # Two more deaths within the window: the second restart is the last allowed, the third death ends `up`.
        os.kill(pids["retriever"], signal.SIGKILL)
        text = wait_for(
            lambda: re.search(rf"retriever restarted \(pid (?!{new_pid}\))(\d+)\)", out.read_text()),
            60,
            "the second restart",
        )
        pids["retriever"] = int(text[1])
        wait_for(
            lambda: f"retriever (pid {pids['retriever']}) SERVING again" in out.read_text(),
            120,
            "the second restart to serve",
        )
        os.kill(pids["retriever"], signal.SIGKILL)
        assert up.wait(60) == 1, out.read_text()
        assert "giving up" in out.read_text() and "retriever cannot be kept running" in out.read_text()
        for stage, pid in pids.items():
            wait_for(lambda pid=pid: not alive(pid), 30, f"{stage} to be stopped")
        channel.close()


def test_a_stage_that_stops_answering_is_killed_and_restarted(tmp_path):
    """A stopped (SIGSTOP) or deadlocked stage never exits, so nothing restarted it: the mesh stayed broken. The
    HTTP door, whose readiness waits on that gateway, answers its liveness check and is left alone."""
    with supervised_mesh(tmp_path, "--unresponsive-after", "6") as (up, out, pids):
        table = stage_table(up, out)
        pids.update({stage: int(table[stage][3]) for stage in STAGES})
        http = re.search(r"^http\s+\S+\s+pid (\d+)", out.read_text(), re.MULTILINE)
        assert http, out.read_text()
        pids["http"] = int(http[1])
        os.kill(pids["gateway"], signal.SIGSTOP)
        text = wait_for(
            lambda: re.search(r"gateway restarted \(pid (\d+)\)", out.read_text()), 60, "the hung stage's restart"
        )
        assert re.search(rf"gateway \(pid {pids['gateway']}\) has answered no health check for \d+s", text.string)
        new_pid = int(text[1])
        wait_for(lambda: f"gateway (pid {new_pid}) SERVING again" in out.read_text(), 120, "it to serve")
        assert not alive(pids["gateway"])
        for stage in set(pids) - {"gateway"}:
            assert alive(pids[stage]), f"{stage} lost its process"
        assert "http (pid" not in out.read_text()  # never judged hung, never restarted
        pids["gateway"] = new_pid
