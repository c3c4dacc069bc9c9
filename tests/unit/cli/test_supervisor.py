"""The supervisor's restart policy on a fake mesh and a fake clock (the real-process test is
tests/integration/test_supervisor.py)."""

import threading
from pathlib import Path

from services.cli.supervisor import Supervisor
from shared.observability import metrics


class FakeProc:
    pids = iter(range(1000, 2000))

    def __init__(self):
        self.pid = next(self.pids)
        self.code = None

    def poll(self):
        return self.code


class FakeMesh:
    def __init__(self, stages=("gateway", "retriever")):
        self.processes = {s: FakeProc() for s in stages}
        self.started = []

    def start_stage(self, stage):
        self.processes[stage] = FakeProc()
        self.started.append(stage)

    def health(self, stage, timeout=1.0):
        return "SERVING"

    def log_tail(self, stage, lines=20):
        return "(log)"

    def log_path(self, stage):
        return Path("/nonexistent-ragmesh-logs") / f"{stage}.log"  # none to rotate


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def restarts(stage):
    return metrics.STAGE_RESTARTS.labels(stage)._value.get()


def test_a_dead_stage_is_restarted_after_a_doubling_backoff_and_the_others_are_left_alone():
    mesh, clock = FakeMesh(), Clock()
    sup = Supervisor(mesh, max_restarts=5, window=60, backoff=0.5, clock=clock)
    gateway = mesh.processes["gateway"]
    before = restarts("retriever")
    for failure, wait in enumerate((0.5, 1.0, 2.0), start=1):
        mesh.processes["retriever"].code = -9
        assert sup.step()
        assert mesh.started == ["retriever"] * (failure - 1)  # not before its backoff
        clock.now += wait - 0.01
        assert sup.step() and len(mesh.started) == failure - 1
        clock.now += 0.01
        assert sup.step() and mesh.started == ["retriever"] * failure
        assert mesh.processes["retriever"].poll() is None
        assert sup.step()  # SERVING again
    assert restarts("retriever") - before == 3
    assert mesh.processes["gateway"] is gateway


def test_more_failures_than_allowed_within_the_window_give_up():
    mesh, clock = FakeMesh(), Clock()
    sup = Supervisor(mesh, max_restarts=2, window=60, backoff=0.5, clock=clock)
    for _ in range(2):
        mesh.processes["retriever"].code = 1
        assert sup.step()
        clock.now += 5
        assert sup.step()
    mesh.processes["retriever"].code = 1
    assert not sup.step()
    assert sup.failed_stage == "retriever"


def test_failures_older_than_the_window_are_forgotten():
    mesh, clock = FakeMesh(), Clock()
    sup = Supervisor(mesh, max_restarts=1, window=60, backoff=0.5, clock=clock)
    for _ in range(4):
        mesh.processes["retriever"].code = 1
        assert sup.step()
        clock.now += 61
        assert sup.step()
    assert mesh.started == ["retriever"] * 4


def test_run_returns_0_when_stopped_and_1_when_a_stage_cannot_be_kept_running():
    stop = threading.Event()
    stop.set()
    assert Supervisor(FakeMesh(), poll=0.01).run(stop) == 0
    mesh = FakeMesh()
    mesh.processes["gateway"].code = 1
    sup = Supervisor(mesh, max_restarts=0, poll=0.01)
    assert sup.run(threading.Event()) == 1 and sup.failed_stage == "gateway"
