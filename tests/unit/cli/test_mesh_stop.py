"""Mesh.stop on real processes that ignore SIGTERM: the stages behind the gateway share one deadline, so a
stuck mesh stops in about one timeout instead of one per stage (a CI launcher stopped by SIGTERM has a budget),
and each stage that had to be killed is named."""

import subprocess
import sys
import time

from services.cli.mesh import START_ORDER, Mesh

STUCK = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
OBEDIENT = "import time; print('ready', flush=True); time.sleep(60)"


def spawn(code: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"  # its SIGTERM handler is set
    return proc


def test_stuck_stages_are_killed_under_one_shared_deadline_and_named(tmp_path, capsys):
    mesh = Mesh(str(tmp_path))
    stuck = {"retriever", "reranker", "indexer"}
    mesh.processes = {stage: spawn(STUCK if stage in stuck else OBEDIENT) for stage in START_ORDER}
    try:
        started = time.monotonic()
        mesh.stop(timeout=2.0)
        elapsed = time.monotonic() - started
        assert all(proc.poll() is not None for proc in mesh.processes.values())
        # One deadline per step (gateway, then the rest together): 3 stuck stages in turn would take >= 6 s.
        assert elapsed < 5.0, f"stop took {elapsed:.1f}s"
        killed = {stage for stage, proc in mesh.processes.items() if proc.returncode == -9}
        assert killed == stuck
        err = capsys.readouterr().err
        assert all(f"{stage} (pid {mesh.processes[stage].pid}) still running" in err for stage in stuck)
        assert "gateway" not in err and "chunker" not in err
    finally:
        for proc in mesh.processes.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()
