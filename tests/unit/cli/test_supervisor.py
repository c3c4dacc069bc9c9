"""The supervisor's restart policy on a fake mesh and a fake clock (the real-process test is
tests/integration/test_supervisor.py)."""

import os
import signal
import threading
import time
from pathlib import Path

from services.cli.supervisor import Supervisor
from shared import stopping
from shared.observability import metrics
from shared.stopping import StopRequest


class FakeProc:
    pids = iter(range(1000, 2000))

    def __init__(self):
        self.pid = next(self.pids)
        self.code = None

    def poll(self):
        return self.code

    def kill(self):
        self.code = -9


class FakeMesh:
    def __init__(self, stages=("gateway", "retriever")):
        self.processes = {s: FakeProc() for s in stages}
        self.started = []
        self.status = {}  # a stage's health answer; SERVING when not set

    def start_stage(self, stage):
        self.processes[stage] = FakeProc()
        self.started.append(stage)

    def health(self, stage, timeout=1.0):
        return self.status.get(stage, "SERVING")

    def alive(self, stage, timeout):
        return not self.health(stage, timeout).startswith("UNREACHABLE")

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


def test_a_stage_that_answers_no_health_check_is_killed_and_restarted():
    """A hung or stopped stage never exits: without a liveness check it stayed down until someone noticed."""
    mesh, clock = FakeMesh(), Clock()
    sup = Supervisor(mesh, backoff=0.5, clock=clock, unresponsive_after=30)
    hung = mesh.processes["retriever"]
    mesh.status["retriever"] = "UNREACHABLE (DEADLINE_EXCEEDED)"
    mesh.status["gateway"] = "NOT_SERVING"  # an answer: alive, whatever it says
    for _ in range(6):  # silent from the first check on, 25 s at the sixth: not yet
        assert sup.step() and hung.poll() is None
        clock.now += 5
    assert sup.step() and hung.poll() == -9  # 30 s
    mesh.status.pop("retriever")
    assert sup.step()  # seen dead: a failure, restarted after the backoff
    clock.now += 0.5
    assert sup.step() and mesh.started == ["retriever"]
    assert mesh.processes["gateway"].poll() is None


def test_a_stage_silent_for_a_while_then_answering_is_left_alone():
    mesh, clock = FakeMesh(), Clock()
    sup = Supervisor(mesh, clock=clock, unresponsive_after=30)
    for silent in (True, False) * 4:  # 20 s silent, an answer, 20 s silent, ...
        mesh.status["retriever"] = "UNREACHABLE (UNAVAILABLE)" if silent else "SERVING"
        for _ in range(4 if silent else 1):
            assert sup.step()
            clock.now += 5
    assert mesh.processes["retriever"].poll() is None and mesh.started == []


def test_a_restarted_stage_that_never_serves_is_killed_after_the_start_timeout():
    mesh, clock = FakeMesh(), Clock()
    sup = Supervisor(mesh, backoff=0.5, clock=clock, start_timeout=60)
    mesh.processes["retriever"].code = 1
    assert sup.step()
    clock.now += 0.5
    mesh.status["retriever"] = "NOT_SERVING"
    assert sup.step() and mesh.started == ["retriever"]
    stuck = mesh.processes["retriever"]
    clock.now += 59
    assert sup.step() and stuck.poll() is None
    clock.now += 2
    assert sup.step() and stuck.poll() == -9


def test_a_stop_set_by_a_signal_handler_in_the_middle_of_the_wait_ends_it(monkeypatch):
    """`ragmesh up` hung on Ctrl-C: its handler set a threading.Event while the main thread was inside that Event's
    wait, holding its lock. A StopRequest is set without a lock: here the handler runs inside the wait itself."""
    stop = StopRequest()
    monkeypatch.setattr(stopping.time, "sleep", lambda seconds: stop.set())  # a signal arriving mid-wait
    assert stop.wait(30) is True


def test_a_real_signal_stops_the_supervisor():
    stop = StopRequest()
    previous = signal.signal(signal.SIGUSR1, lambda *_: stop.set())
    try:
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        started = time.monotonic()
        assert Supervisor(FakeMesh(), poll=0.01).run(stop) == 0
        assert time.monotonic() - started < 10
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert not StopRequest().wait(0.05)  # unset: the wait runs out
