"""A launcher stopped with SIGTERM (a CI timeout, `kill`) stops the stages it started, by pid, instead of leaving
them running and holding their ports: Python's default for SIGTERM ends a process without running its `finally`
and `with` exits. Every command that starts a mesh (the ragmesh CLI, the load tests and benchmarks) calls
services.cli.mesh.stop_on_sigterm first; this launcher is the smallest one that does."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from services.cli.mesh import ROOT_DIR

# It waits in short sleeps, as `ragmesh up` does: Python runs a signal's handler between bytecodes, so a SIGTERM
# that lands after the print and before one long time.sleep(600) starts (the test sends it as soon as it reads the
# line) would wait out the whole sleep (seen: 1 run in 5 here, and in CI). SIGUSR1 dumps the launcher's threads
# to its stderr: where it is stuck when it does not exit.
LAUNCHER = """
import faulthandler, signal, sys, time
from services.cli.mesh import Mesh, stop_on_sigterm
faulthandler.register(signal.SIGUSR1)
stop_on_sigterm()
with Mesh.on_free_ports(sys.argv[1]) as mesh:
    print(" ".join(str(p.pid) for p in mesh.processes.values()), flush=True)
    for _ in range(6000):
        time.sleep(0.1)
"""


def running(pid: int) -> bool:
    """True while the process exists and is not a zombie (an orphan's zombie waits for a reaper that a
    container's init may never be)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def what_happened(launcher: subprocess.Popen, stderr: Path, logs: Path, pids: list[int]) -> str:
    """The launcher's stderr (with its threads' stacks when it still runs), the stages still running and each
    stage's log tail: why a launcher did not stop in time."""
    if launcher.poll() is None:
        launcher.send_signal(signal.SIGUSR1)
        time.sleep(1)
    tails = "".join(
        f"\n--- {log.name}\n" + "\n".join(log.read_text(errors="replace").splitlines()[-8:])
        for log in sorted(logs.glob("*.log"))
    )
    still = [pid for pid in pids if running(pid)]
    return f"stages still running: {still}\n--- launcher stderr\n{stderr.read_text(errors='replace')}{tails}"


def test_sigterm_to_the_launcher_stops_every_stage(tmp_path):
    stderr = tmp_path / "launcher.err"
    launcher = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(tmp_path / "data")],
        cwd=ROOT_DIR,
        stdout=subprocess.PIPE,
        stderr=stderr.open("w"),
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT_DIR},
    )
    pids: list[int] = []
    try:
        assert launcher.stdout is not None
        pids = [int(pid) for pid in launcher.stdout.readline().split()]
        assert len(pids) == 6, f"the launcher did not report six stages (exit code {launcher.poll()})"
        assert all(running(pid) for pid in pids)
        launcher.send_signal(signal.SIGTERM)
        try:
            code = launcher.wait(60)
        except subprocess.TimeoutExpired:
            code = None
        assert code == 143, what_happened(launcher, stderr, tmp_path / "data" / "logs", pids)
        deadline = time.monotonic() + 10  # Mesh.stop waits for each stage; this only absorbs scheduling
        while any(running(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert [pid for pid in pids if running(pid)] == [], "stages left running after the launcher stopped"
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
        for pid in pids:
            if running(pid):
                os.kill(pid, signal.SIGKILL)  # only the stages this test's launcher started
