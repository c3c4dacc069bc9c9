"""Runs ghz (the gRPC load generator, `make ghz` puts it in .tools/) against the gateway and reads its results.

ghz finds the methods in protos/ragmesh.protoset (`make stubs`): server reflection would do too, but the descriptor
set needs no round trip and works the same against any gateway build. Each request's latency, start time and
status come back (ghz's JSON report keeps them per request), so percentiles and fault timelines are computed here.
"""

import dataclasses
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
GHZ = ROOT / ".tools" / "ghz"
PROTOSET = ROOT / "protos" / "ragmesh.protoset"
GATEWAY_SERVICE = "ragmesh.v1.Gateway"


@dataclasses.dataclass(frozen=True)
class Call:
    """One request as ghz saw it: start time (unix seconds), latency (seconds), status (gRPC code name)."""

    start: float
    latency: float
    status: str
    error: str

    @property
    def end(self) -> float:
        return self.start + self.latency

    @property
    def ok(self) -> bool:
        return self.status == "OK"


@dataclasses.dataclass
class LoadResult:
    rpc: str
    concurrency: int
    wall_seconds: float
    calls: list[Call]

    @property
    def ok_latencies(self) -> np.ndarray:
        return np.array([c.latency for c in self.calls if c.ok])

    @property
    def throughput(self) -> float:
        """Successful requests per second over the run."""
        return sum(c.ok for c in self.calls) / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def percentiles(self) -> dict[str, float | None]:
        latencies = self.ok_latencies
        if not len(latencies):
            return {"p50": None, "p95": None, "p99": None}
        return {f"p{q}": float(np.percentile(latencies, q)) for q in (50, 95, 99)}

    def statuses(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for call in self.calls:
            counts[call.status] = counts.get(call.status, 0) + 1
        return dict(sorted(counts.items()))

    def failed(self) -> int:
        return sum(not c.ok for c in self.calls)


def code_name(status: str) -> str:
    """ghz writes Go's code names (DeadlineExceeded); gRPC and Python say DEADLINE_EXCEEDED."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "_", status).upper() if status else "UNKNOWN"


def installed() -> bool:
    return GHZ.exists() and PROTOSET.exists()


class GhzLoad:
    """One ghz process: `concurrency` workers over one connection, for `duration_s` seconds or `requests` requests,
    cycling through `messages` (JSON forms of the request). In-flight requests are waited for at the end, so a
    request that hangs is seen (up to its deadline), never dropped. `stop()` ends an open-ended load early."""

    def __init__(
        self,
        address: str,
        rpc: str,
        messages: list[dict],
        api_key: str,
        concurrency: int,
        duration_s: float = 0.0,
        requests: int = 0,
        deadline_s: float = 10.0,
        cpus: int = 1,
    ):
        if not installed():
            raise SystemExit(f"ghz or the descriptor set is missing ({GHZ}, {PROTOSET}): run `make ghz stubs`")
        if bool(duration_s) == bool(requests):
            raise ValueError("give exactly one of duration_s and requests")
        self.rpc, self.concurrency = rpc, concurrency
        self._scratch = Path(tempfile.mkdtemp(prefix="ragmesh-ghz-"))
        data_file, self._out_file = self._scratch / "data.json", self._scratch / "out.json"
        data_file.write_text(json.dumps(messages))
        # The key goes in a file (mode 0600), not on the command line where any local user's `ps` shows it.
        metadata_file = self._scratch / "metadata.json"
        metadata_file.touch(mode=0o600)
        metadata_file.write_text(json.dumps({"authorization": f"Bearer {api_key}"}))
        command = [
            str(GHZ),
            "--insecure",
            f"--protoset={PROTOSET}",
            f"--call={GATEWAY_SERVICE}.{rpc}",
            f"--data-file={data_file}",
            f"--metadata-file={metadata_file}",
            f"--concurrency={concurrency}",
            "--connections=1",
            f"--timeout={deadline_s}s",
            f"--cpus={cpus}",
            "--format=json",
            f"--output={self._out_file}",
        ]
        command += [f"--duration={duration_s}s", "--duration-stop=wait"] if duration_s else [f"--total={requests}"]
        self._process = subprocess.Popen(
            [*command, address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ)
        )

    def stop(self) -> None:
        """End the load now: ghz stops sending on SIGINT and still writes its report."""
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGINT)

    def result(self) -> LoadResult:
        try:
            stdout, stderr = self._process.communicate()
            if not self._out_file.exists():
                raise RuntimeError(f"ghz failed ({self._process.returncode}): {stderr.strip() or stdout.strip()}")
            report = json.loads(self._out_file.read_text())
        finally:
            shutil.rmtree(self._scratch, ignore_errors=True)
        # ghz's timestamp is when the call ended (the gRPC stats End event), not when it began.
        calls = [
            Call(
                start=_unix(detail["timestamp"]) - detail["latency"] / 1e9,
                latency=detail["latency"] / 1e9,
                status=code_name(detail.get("status", "")),
                error=detail.get("error", ""),
            )
            for detail in report.get("details") or []
        ]
        calls.sort(key=lambda c: c.start)
        return LoadResult(self.rpc, self.concurrency, report["total"] / 1e9, calls)


def run(address: str, rpc: str, messages: list[dict], api_key: str, concurrency: int, **kwargs) -> LoadResult:
    """A bounded load (duration_s= or requests=), waited for."""
    return GhzLoad(address, rpc, messages, api_key, concurrency, **kwargs).result()


def _unix(timestamp: str) -> float:
    """ghz's RFC 3339 timestamps carry nanoseconds, which datetime.fromisoformat (3.11) does not take."""
    from datetime import datetime

    match = re.fullmatch(r"(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)", timestamp)
    if not match:
        raise ValueError(f"ghz timestamp {timestamp!r} is not RFC 3339")
    base, fraction, zone = match.groups()
    seconds = datetime.fromisoformat(base + ("+00:00" if zone == "Z" else zone)).timestamp()
    return seconds + (float(f"0.{fraction}") if fraction else 0.0)
