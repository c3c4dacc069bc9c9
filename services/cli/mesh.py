"""Starts the six stages as separate processes on loopback, waits for SERVING, stops them by pid; optionally
the HTTP front door as a seventh process (ready when its /readyz says the gateway answers)."""

import fcntl
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.cli import stage_logs
from shared.config import DEFAULT_HTTP_PORT, DEFAULT_METRICS_PORTS, DEFAULT_PORTS, STAGES
from shared.credentials import DEFAULT_TENANT, gateway_channel
from shared.keys import local_key
from shared.names import TENANT_ID
from shared.tls import TLS_ENV, stage_channel

MAX_IN_FLIGHT_ENV = "RAGMESH_GATEWAY_MAX_IN_FLIGHT"

ROOT_DIR = str(Path(__file__).resolve().parents[2])
# The data dir holds every tenant's documents (index), questions and answers (answer log) and logs: readable
# by the mesh's own user only. Stages create their files under this umask (0600 files, 0700 folders).
PRIVATE_DIR_MODE = 0o700
STAGE_UMASK = 0o077
# Start order matters only for readiness messages; every stage retries nothing at start-up.
START_ORDER = ("chunker", "indexer", "retriever", "reranker", "generator", "gateway")
# The HTTP front door (services/http): a client of the gateway, started after it when a mesh asks for it.
HTTP = "http"
# Stages that may run as several processes (`--replicas retriever=2`): each keeps nothing another replica
# must see (the retriever's k-NN views follow the index file's generation; erasure's Forget reaches every one).
# The gateway calls them round robin (shared/clients.py). The indexer is the index's one writer, the gateway
# the callers' one address and answer log.
REPLICABLE = ("chunker", "retriever", "reranker", "generator")
# A stage drains in-flight calls for its grace (10 s by default) on SIGTERM; past this it is killed.
STOP_TIMEOUT = 15.0


EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
_ports = random.Random()  # its own generator: a test that seeds `random` must not make two runs pick alike
_handed_out: set[int] = set()


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = map(int, EPHEMERAL_RANGE_FILE.read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999  # Linux's default


def free_port() -> int:
    """A loopback port free now, outside the kernel's ephemeral range and not handed out before by this process.
    A port that bind(0) returns is ephemeral: an outgoing connection may take it before the stage that was given
    it binds it (seen: a stage's metrics port taken while a load test started its mesh)."""
    low, high = _ephemeral_range()
    below, above = (10000, low - 1), (high + 1, 65535)
    lo, hi = max((below, above), key=lambda span: span[1] - span[0])
    for _ in range(200 if hi - lo >= 1000 else 0):
        port = _ports.randint(lo, hi)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    with socket.socket() as sock:  # no room outside the ephemeral range: the kernel's choice
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stage_health(address: str, stage: str, tls_folder: str = "", timeout: float = 1.0) -> str:
    """A stage's gRPC health status (SERVING, NOT_SERVING, ...), or UNREACHABLE with the call's status code."""
    with stage_channel(address, stage, "launcher", folder=tls_folder) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=timeout)
        except grpc.RpcError as err:
            return f"UNREACHABLE ({err.code().name})"
    return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


def one_machine_in_flight() -> int:
    """The gateway's in-flight limit when every stage shares this machine's CPUs: two requests per CPU, so a CPU
    has work while a request is between stages, and no more, since more only make every stage slower. On this
    project's 2-core machine a sweep at concurrency 16 put 4 ahead of 2, 3 and 6; against no limit the end-to-end
    figures are the same within noise while each stage keeps its own latency (README, Load and fault tests)."""
    return 2 * len(os.sched_getaffinity(0))


class MeshError(RuntimeError):
    pass


def replica_name(stage: str, n: int) -> str:
    """The process name of a stage's n-th replica: the stage's own name for the first, then "retriever-2"..."""
    return stage if n == 1 else f"{stage}-{n}"


def stage_of(name: str) -> str:
    """The stage a process name runs ("retriever-2": retriever)."""
    stage, _, n = name.rpartition("-")
    return stage if stage and n.isdigit() else name


def parse_replicas(specs: Iterable[str]) -> dict[str, int]:
    """`retriever=2` (repeatable) as {"retriever": 2}, refusing a stage that cannot be replicated."""
    replicas: dict[str, int] = {}
    for spec in specs:
        stage, sep, count = spec.partition("=")
        if not sep or not count.isdigit() or int(count) < 1:
            raise MeshError(f"--replicas {spec!r}: expected STAGE=N with N >= 1, e.g. retriever=2")
        if stage not in REPLICABLE:
            raise MeshError(f"--replicas {spec!r}: only {', '.join(REPLICABLE)} run as several processes")
        replicas[stage] = int(count)
    return replicas


def stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C (SystemExit 143), so a launcher stopped by `kill` or a CI timeout runs its
    `finally` and `with` exits and stops the stages it started (by pid). Python's default for SIGTERM ends the
    process on the spot, leaving every stage running and holding its ports. Call it from the main thread, and
    wait in short steps rather than one long sleep: Python runs the handler between bytecodes, so a SIGTERM that
    lands just before a long blocking call waits for the call to return."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


LOCK_FILE = "mesh.lock"
# Every process's metrics endpoint in Prometheus' file_sd form, written by `ragmesh up` into the data dir:
# replicas listen on ports the shipped static scrape config cannot know.
SCRAPE_TARGETS_FILE = "prometheus-targets.json"


class DataDirLock:
    """One mesh per data dir: two would share one index, answer log and key store behind each other's backs
    (each indexer's and retriever's in-memory state would go stale), and a second `ragmesh up` run by mistake
    on free ports would start without a word. An flock is released by the kernel when its holder dies, so a
    crashed launcher never leaves a stale lock; the file records the holder's pid for the message."""

    def __init__(self, data_dir: str):
        self.path = os.path.join(data_dir, LOCK_FILE)
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as err:
            raise MeshError(f"the data dir cannot be written ({self.path}: {err.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 64).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise MeshError(
                f"another mesh (launcher pid {holder}) is running on the data dir {os.path.dirname(self.path)}; "
                "stop it, or give this one its own --data-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor releases the flock
            self._fd = None


class Mesh:
    def __init__(
        self,
        data_dir: str,
        ports: dict[str, int] | None = None,
        metrics_ports: dict[str, int] | None = None,
        log_dir: str | None = None,
        extra_env: dict[str, str] | None = None,
        host: str = "127.0.0.1",
        http: bool = False,
        replicas: dict[str, int] | None = None,
    ):
        self.host = host
        self.ports = dict(ports or DEFAULT_PORTS)
        if http:
            self.ports.setdefault(HTTP, DEFAULT_HTTP_PORT)
        self.replicas = {stage: 1 for stage in STAGES} | (replicas or {})
        # Process names in start order: a stage's replicas follow it ("retriever", "retriever-2").
        self.start_order = tuple(
            replica_name(stage, n) for stage in START_ORDER for n in range(1, self.replicas[stage] + 1)
        ) + ((HTTP,) if http else ())
        self.metrics_ports = dict(metrics_ports or DEFAULT_METRICS_PORTS)
        for name in self.start_order:  # a replica beyond the first listens where the machine has room
            if name != HTTP and name not in self.ports:
                self.ports[name] = free_port()
            if name != HTTP and name not in self.metrics_ports:
                self.metrics_ports[name] = free_port()
        self.data_dir = os.path.abspath(data_dir)
        self.log_dir = Path(log_dir or os.path.join(self.data_dir, "logs"))
        self.extra_env = extra_env or {}
        self.processes: dict[str, subprocess.Popen] = {}
        self._keys: dict[str, str] = {}
        self._lock = DataDirLock(self.data_dir)

    def stage_names(self, stages: Iterable[str] = STAGES) -> list[str]:
        """The process names of these stages, each stage's replicas included."""
        return [name for name in self.start_order if stage_of(name) in stages]

    @classmethod
    def on_free_ports(cls, data_dir: str, **kwargs) -> "Mesh":
        http_port = {HTTP: free_port()} if kwargs.get("http") else {}
        return cls(
            data_dir,
            ports={**{stage: free_port() for stage in STAGES}, **http_port},
            metrics_ports={stage: free_port() for stage in STAGES},
            **kwargs,
        )

    def scrape_targets(self, launcher_metrics_port: int = 0) -> list[dict]:
        """Each process's metrics endpoint (replicas included, and the launcher's own when it serves one) as
        Prometheus file_sd entries, labelled with its stage as `component` (never a label a ragmesh metric uses:
        deploy/observability/prometheus.yml); Prometheus' own `instance` tells replicas apart."""
        ports = [(stage_of(name), self.metrics_ports[name]) for name in self.stage_names() if self.metrics_ports[name]]
        if launcher_metrics_port:
            ports.append(("launcher", launcher_metrics_port))
        return [{"targets": [f"{self.host}:{port}"], "labels": {"component": stage}} for stage, port in ports]

    def write_scrape_targets(self, launcher_metrics_port: int = 0) -> str:
        """The scrape targets into the data dir, replaced whole (Prometheus re-reads a file_sd file when it
        changes and must never see half of one); returns its path."""
        path = os.path.join(self.data_dir, SCRAPE_TARGETS_FILE)
        partial = f"{path}.{os.getpid()}.tmp"
        with open(partial, "w", encoding="utf-8") as out:
            json.dump(self.scrape_targets(launcher_metrics_port), out, indent=2)
        os.replace(partial, path)
        return path

    def address(self, stage: str) -> str:
        """Where one process listens (a stage name is its first replica)."""
        return f"{self.host}:{self.ports[stage]}"

    def stage_address(self, stage: str) -> str:
        """Where the gateway finds a stage: every replica's address, comma-separated (shared/clients.py)."""
        return ",".join(self.address(name) for name in self.stage_names((stage,)))

    def metrics_url(self, stage: str) -> str:
        return f"http://{self.host}:{self.metrics_ports[stage]}/metrics"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({"RAGMESH_DATA_DIR": self.data_dir, "PYTHONUNBUFFERED": "1"})
        for stage in STAGES:
            env[f"RAGMESH_{stage.upper()}_PORT"] = str(self.ports[stage])
            env[f"RAGMESH_{stage.upper()}_HOST"] = self.host
            env[f"RAGMESH_{stage.upper()}_ADDR"] = self.stage_address(stage)
            env[f"RAGMESH_{stage.upper()}_METRICS_PORT"] = str(self.metrics_ports[stage])
        if HTTP in self.start_order:
            env.update({"RAGMESH_HTTP_HOST": self.host, "RAGMESH_HTTP_PORT": str(self.ports[HTTP])})
        env.setdefault(MAX_IN_FLIGHT_ENV, str(one_machine_in_flight()))
        env.update(self.extra_env)
        return env

    def process_env(self, name: str) -> dict[str, str]:
        """The mesh's environment with this process's own ports (a replica's are not its stage's first)."""
        env = self.env()
        stage = stage_of(name)
        if name != stage:
            env[f"RAGMESH_{stage.upper()}_PORT"] = str(self.ports[name])
            env[f"RAGMESH_{stage.upper()}_METRICS_PORT"] = str(self.metrics_ports[name])
        return env

    def start_stage(self, stage: str) -> None:
        """Start one process: a stage, or one of its replicas by its process name ("retriever-2")."""
        self.log_dir.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        log = stage_logs.open_for_stage(self.log_path(stage))
        self.processes[stage] = subprocess.Popen(
            [sys.executable, "-m", f"services.{stage_of(stage)}.server"],
            env=self.process_env(stage),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=ROOT_DIR,
            umask=STAGE_UMASK,
        )
        log.close()

    def key_for(self, tenant_id: str = "") -> str:
        """This mesh's local writer key for a tenant (the demo tenant's when none is named), made on
        first use in its data dir; the client that launched the mesh owns the data dir anyway."""
        tenant_id = tenant_id or DEFAULT_TENANT
        if not TENANT_ID.fullmatch(tenant_id):
            tenant_id = DEFAULT_TENANT  # no key can name it; the gateway refuses the request, not this client
        if tenant_id not in self._keys:
            self._keys[tenant_id] = local_key(self.data_dir, tenant_id)
        return self._keys[tenant_id]

    def gateway_channel(self) -> grpc.Channel:
        """A channel to the gateway that sends each request's tenant's local key."""
        return gateway_channel(self.address("gateway"), self.key_for)

    def start(self, timeout: float = 180.0) -> None:
        os.makedirs(self.data_dir, mode=PRIVATE_DIR_MODE, exist_ok=True)
        self._lock.acquire()
        mode = os.stat(self.data_dir).st_mode & 0o777
        if mode & 0o077:  # made before, by hand: left as it is, but said
            print(
                f"warning: the data dir {self.data_dir} is open to other users (mode {oct(mode)}) and holds every "
                f"tenant's documents and questions: chmod 700 {self.data_dir}",
                file=sys.stderr,
            )
        try:
            self.key_for(DEFAULT_TENANT)  # `ragmesh up` and `make demo` work with no key step
            for name in self.stage_names():
                self.start_stage(name)
            self.wait_serving(timeout)
            if HTTP in self.start_order:
                self.start_stage(HTTP)
                self.wait_serving(timeout, stages=(HTTP,))
        except BaseException:
            self.stop()
            raise

    def log_path(self, stage: str) -> Path:
        return self.log_dir / f"{stage}.log"

    def log_tail(self, stage: str, lines: int = 20) -> str:
        return stage_logs.tail(self.log_path(stage), lines)

    def http_url(self) -> str:
        return f"http://{self.host}:{self.ports[HTTP]}"

    def health(self, stage: str, timeout: float = 1.0) -> str:
        if stage == HTTP:
            return self._http_health(timeout)
        return stage_health(self.address(stage), stage_of(stage), self.env().get(TLS_ENV, ""), timeout)

    def alive(self, stage: str, timeout: float) -> bool:
        """The stage's process answers at all (liveness, not readiness): a gRPC stage its health check with any
        status, the front door /healthz (its /readyz waits on the gateway, which may be the one hung)."""
        if stage != HTTP:
            return not self.health(stage, timeout).startswith("UNREACHABLE")
        try:
            with urllib.request.urlopen(f"{self.http_url()}/healthz", timeout=timeout):
                return True
        except OSError:  # urllib's HTTPError too: an error page is not the answer /healthz gives alive
            return False

    def _http_health(self, timeout: float) -> str:
        """SERVING when the front door answers /readyz with 200 (it reaches the gateway)."""
        try:
            with urllib.request.urlopen(f"{self.http_url()}/readyz", timeout=timeout):
                return "SERVING"
        except urllib.error.HTTPError as err:
            return "NOT_SERVING" if err.code == 503 else f"UNREACHABLE (HTTP {err.code})"
        except OSError as err:
            return f"UNREACHABLE ({type(err).__name__})"

    def wait_serving(self, timeout: float, stages: Iterable[str] | None = None) -> None:
        """Wait until these processes (default: every stage's, replicas included) are SERVING."""
        deadline = time.monotonic() + timeout
        pending = set(self.stage_names() if stages is None else stages)
        while pending:
            for stage in sorted(pending):
                code = self.processes[stage].poll()
                if code is not None:
                    raise MeshError(f"{stage} exited with code {code} during start-up:\n{self.log_tail(stage)}")
                if self.health(stage) == "SERVING":
                    pending.discard(stage)
            if pending and time.monotonic() > deadline:
                raise MeshError(f"not SERVING after {timeout:.0f}s: {', '.join(sorted(pending))}")
            if pending:
                time.sleep(0.3)

    def signal_stage(self, stage: str, signum: int) -> None:
        """Send one stage's process a signal (fault drills: SIGKILL, SIGSTOP/SIGCONT); a signal that ends it is
        waited for, so the next start finds its port free."""
        proc = self.processes[stage]
        proc.send_signal(signum)
        if signum == signal.SIGKILL:
            proc.wait()

    def restart_stage(self, stage: str, timeout: float = 180.0) -> None:
        """Stop one stage (if it still runs), start it again on the same ports and wait until it is SERVING;
        the other stages keep running and find it again through their reconnecting channels."""
        self.stop_stage(stage)
        self.start_stage(stage)
        self.wait_serving(timeout, stages=(stage,))

    def stop_stage(self, stage: str, timeout: float = STOP_TIMEOUT) -> None:
        self.stop_stages((stage,), timeout)

    def stop_stages(self, stages: Iterable[str], timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM the stages together, wait for all of them under one deadline, then SIGKILL (and name on
        stderr) any still running: a stuck stage costs `timeout` once, not once per stage behind it."""
        running = {s: p for s in stages if (p := self.processes.get(s)) is not None and p.poll() is None}
        for proc in running.values():
            proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for stage, proc in running.items():
            try:
                proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                message = f"ragmesh: {stage} (pid {proc.pid}) still running {timeout:.0f}s after SIGTERM; killed"
                print(message, file=sys.stderr)
                proc.kill()
                proc.wait()

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        # Front doors first, so no new work enters while the stages behind them drain; only the gateway calls
        # other stages, so those stop together.
        front = [stage for stage in (HTTP, "gateway") if stage in self.start_order]
        for stage in front:
            self.stop_stage(stage, timeout)
        self.stop_stages([stage for stage in reversed(self.start_order) if stage not in front], timeout)
        self._lock.release()

    def __enter__(self) -> "Mesh":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
