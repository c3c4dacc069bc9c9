"""`ragmesh up`'s supervisor: a stage process that exits is restarted on its own ports with exponential
backoff while the other stages keep serving; a stage that fails more than `max_restarts` times within
`window` seconds is given up on, and the supervisor stops the mesh and reports failure. A stage that stops
answering its health check for `unresponsive_after` seconds (hung, deadlocked, stopped), or is still not
SERVING `start_timeout` seconds after a restart, is killed and so restarted like a crash."""

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field

from services.cli import stage_logs
from services.cli.mesh import Mesh, MeshError
from shared.observability import metrics
from shared.stopping import StopRequest

# Stage logs are checked for size this often (seconds), not on every poll.
LOG_CHECK_INTERVAL = 10.0

log = logging.getLogger("ragmesh.supervisor")


# Liveness: how long one health check may take. Any answer counts as alive (Mesh.alive: NOT_SERVING included);
# no answer in time does not.
HEALTH_CHECK_TIMEOUT = 2.0


@dataclass
class _StageState:
    failures: deque = field(default_factory=deque)  # monotonic times of recent exits
    restart_at: float | None = None  # a restart is due then
    starting_since: float | None = None  # restarted, not yet SERVING
    silent_since: float | None = None  # its health checks have gone unanswered since then


class Supervisor:
    def __init__(
        self,
        mesh: Mesh,
        max_restarts: int = 5,
        window: float = 60.0,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        poll: float = 0.5,
        clock=time.monotonic,
        log_max_bytes: int = 50 * 1024 * 1024,
        log_backups: int = 3,
        unresponsive_after: float = 30.0,
        start_timeout: float = 180.0,
    ):
        self.mesh = mesh
        self.max_restarts = max_restarts
        self.window = window
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.poll = poll
        self.clock = clock
        self.states = {stage: _StageState() for stage in mesh.processes}
        for stage in self.states:  # exported from 0, so Prometheus sees the first restart as an increase
            metrics.STAGE_RESTARTS.labels(stage)
        self.failed_stage: str | None = None
        self.log_max_bytes = log_max_bytes
        self.log_backups = log_backups
        self._logs_checked_at: float | None = None
        self.unresponsive_after = unresponsive_after  # 0: never judged hung
        self.start_timeout = start_timeout
        self._health_checked_at: float | None = None

    def delay(self, failures: int) -> float:
        """Backoff before the restart that follows the n-th failure within the window."""
        return min(self.max_backoff, self.backoff * 2 ** max(0, failures - 1))

    def rotate_logs(self) -> None:
        """Each stage log over `log_max_bytes` is copied aside (`log_backups` copies kept) and emptied."""
        for stage in self.states:
            if stage_logs.rotate_if_large(self.mesh.log_path(stage), self.log_max_bytes, self.log_backups):
                log.info("%s: log over %d bytes rotated to %s.1", stage, self.log_max_bytes, stage)

    def step(self) -> bool:
        """One supervision pass; False once a stage cannot be restarted."""
        now = self.clock()
        if self._logs_checked_at is None or now - self._logs_checked_at >= LOG_CHECK_INTERVAL:
            self._logs_checked_at = now
            self.rotate_logs()
        for stage, state in self.states.items():
            proc = self.mesh.processes[stage]
            code = proc.poll()
            if code is not None and state.restart_at is None:
                state.starting_since = None
                state.failures.append(now)
                while state.failures and now - state.failures[0] > self.window:
                    state.failures.popleft()
                if len(state.failures) > self.max_restarts:
                    log.error(
                        "%s (pid %d) exited with code %s: %d failures within %.0fs (at most %d are restarted); "
                        "giving up\n%s",
                        stage,
                        proc.pid,
                        code,
                        len(state.failures),
                        self.window,
                        self.max_restarts,
                        self.mesh.log_tail(stage),
                    )
                    self.failed_stage = stage
                    return False
                wait = self.delay(len(state.failures))
                state.restart_at = now + wait
                log.warning(
                    "%s (pid %d) exited with code %s (failure %d of at most %d in %.0fs); restarting in %.1fs\n%s",
                    stage,
                    proc.pid,
                    code,
                    len(state.failures),
                    self.max_restarts,
                    self.window,
                    wait,
                    self.mesh.log_tail(stage, 5),
                )
            elif state.restart_at is not None and now >= state.restart_at:
                state.restart_at = None
                self.mesh.start_stage(stage)
                state.starting_since = now
                metrics.STAGE_RESTARTS.labels(stage).inc()
                log.warning("%s restarted (pid %d)", stage, self.mesh.processes[stage].pid)
            elif state.starting_since is not None and code is None and self.mesh.health(stage, 0.5) == "SERVING":
                log.info(
                    "%s (pid %d) SERVING again after %.1fs",
                    stage,
                    self.mesh.processes[stage].pid,
                    now - state.starting_since,
                )
                state.starting_since = None
            elif state.starting_since is not None and code is None and now - state.starting_since > self.start_timeout:
                log.error(
                    "%s (pid %d) is not SERVING %.0fs after its restart; killing it, to be restarted\n%s",
                    stage,
                    proc.pid,
                    now - state.starting_since,
                    self.mesh.log_tail(stage, 5),
                )
                state.starting_since = None
                proc.kill()
        if self.unresponsive_after > 0:
            self._check_liveness(now)
        return True

    def _check_liveness(self, now: float) -> None:
        """Every few seconds, each stage that has been SERVING is asked for its health; one that has answered
        nothing for `unresponsive_after` seconds is killed (the next pass restarts it, counted as a failure)."""
        interval = min(5.0, self.unresponsive_after / 3)
        if self._health_checked_at is not None and now - self._health_checked_at < interval:
            return
        self._health_checked_at = now
        for stage, state in self.states.items():
            proc = self.mesh.processes[stage]
            if proc.poll() is not None or state.restart_at is not None or state.starting_since is not None:
                state.silent_since = None
                continue
            if self.mesh.alive(stage, min(HEALTH_CHECK_TIMEOUT, interval)):
                state.silent_since = None
                continue
            if state.silent_since is None:
                state.silent_since = now
            elif now - state.silent_since >= self.unresponsive_after:
                log.error(
                    "%s (pid %d) has answered no health check for %.0fs; killing it, to be restarted",
                    stage,
                    proc.pid,
                    now - state.silent_since,
                )
                state.silent_since = None
                proc.kill()

    def run(self, stop: "threading.Event | StopRequest") -> int:
        """Supervises until `stop` is set (exit 0) or a stage cannot be restarted (exit 1)."""
        while not stop.wait(self.poll):
            try:
                if not self.step():
                    return 1
            except (OSError, MeshError) as err:
                log.error("supervision failed: %s", err)
                return 1
        return 0
