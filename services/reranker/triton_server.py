"""Start and stop the tritonserver that the nvidia-pytriton wheel ships, bound to 127.0.0.1.

    python -m services.reranker.triton_server up [--name NAME]  # make triton-up: a model train-reranker wrote
    python -m services.reranker.triton_server down              # make triton-down: the server `up` started

The server runs from Triton's own environment (deploy/triton/install.sh, `.venv-triton`): its bin first
on PATH (the python-backend stub runs the first python3 there) and this interpreter's libpython ahead of
the system's older copy on LD_LIBRARY_PATH.
"""

import argparse
import os
import signal
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

from shared import config

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_VENV = REPO_ROOT / ".venv-triton"
MODEL_TEMPLATE = REPO_ROOT / "deploy" / "triton" / "models"
MODEL_NAME = config.DEFAULT_TRITON_MODEL


def state_dir() -> Path:
    return config.expand(config.ToolSettings.from_env().triton_home)


def rerankers_root() -> Path:
    """Where `ragmesh train-reranker` works: one folder per trained model, each with its Triton repository."""
    return config.expand(config.RerankerConfig.from_env().cache)


def default_repository(name: str = "sample") -> Path:
    return rerankers_root() / name / "triton"


class TritonServer:
    def __init__(
        self,
        repository: Path | str,
        grpc_port: int = 8001,
        http_port: int = 8000,
        metrics_port: int = 8002,
        venv: Path | str = DEFAULT_VENV,
        log_path: Path | str | None = None,
    ):
        self.repository = Path(repository)
        self.grpc_port, self.http_port, self.metrics_port = grpc_port, http_port, metrics_port
        self.venv = Path(venv)
        self.log_path = Path(log_path) if log_path else state_dir() / f"tritonserver-{grpc_port}.log"
        self.process: subprocess.Popen | None = None

    @property
    def grpc_address(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def _site_packages(self) -> Path:
        found = sorted((self.venv / "lib").glob("python3.*/site-packages"))
        if not found or not (found[0] / "pytriton").is_dir():
            raise FileNotFoundError(f"{self.venv}: no nvidia-pytriton here; run deploy/triton/install.sh")
        return found[0]

    def command(self) -> list[str]:
        server = self._site_packages() / "pytriton" / "tritonserver"
        return [
            str(server / "bin" / "tritonserver"),
            f"--model-repository={self.repository}",
            f"--backend-directory={server / 'backends'}",
            "--grpc-address=127.0.0.1",
            f"--grpc-port={self.grpc_port}",
            "--http-address=127.0.0.1",
            f"--http-port={self.http_port}",
            "--metrics-address=127.0.0.1",
            f"--metrics-port={self.metrics_port}",
            "--exit-timeout-secs=5",
            "--log-verbose=0",
            "--strict-readiness=true",
        ]

    def env(self) -> dict[str, str]:
        site = self._site_packages()
        libs = [
            sysconfig.get_config_var("LIBDIR") or "",
            str(site / "nvidia_pytriton.libs"),
            os.environ.get("LD_LIBRARY_PATH", ""),
        ]
        return {
            **os.environ,
            "PATH": f"{self.venv / 'bin'}:{os.environ.get('PATH', '')}",
            "LD_LIBRARY_PATH": ":".join(p for p in libs if p),
            "VIRTUAL_ENV": str(self.venv),
        }

    def start(self, timeout: float = 120.0) -> "TritonServer":
        version = self.repository / MODEL_NAME / "1"
        if not (version / "model.onnx").is_file() and not (version / "hf" / "config.json").is_file():
            raise FileNotFoundError(f"{self.repository}/{MODEL_NAME}: no trained model; run `ragmesh train-reranker`")
        self.refresh_model_code()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            self.command(), env=self.env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"tritonserver exited with {self.process.returncode}; see {self.log_path}:\n" + self.log_tail()
                )
            if self.ready():
                return self
            time.sleep(0.5)
        self.stop()
        raise TimeoutError(f"tritonserver not ready after {timeout:.0f}s; see {self.log_path}:\n" + self.log_tail())

    def refresh_model_code(self) -> None:
        """A trained model's repository keeps its weights, but serves this checkout's model.py: a cached
        model must not run the code it was installed with months ago."""
        source = MODEL_TEMPLATE / MODEL_NAME / "1" / "model.py"
        target = self.repository / MODEL_NAME / "1" / "model.py"
        if source.is_file() and (not target.is_file() or target.read_bytes() != source.read_bytes()):
            target.write_bytes(source.read_bytes())

    def ready(self) -> bool:
        try:
            url = f"http://127.0.0.1:{self.http_port}/v2/models/{MODEL_NAME}/ready"
            with urllib.request.urlopen(url, timeout=1.0) as response:
                return response.status == 200
        except OSError:
            return False

    def runtime(self) -> str:
        """What the served model logged it runs on ("torch fp16 on cuda", "CPUExecutionProvider", ...): a GPU
        host whose instance fell back to the CPU says so here, where a load report or benchmark can print it."""
        said = [line for line in self.log_tail(400).splitlines() if "cross_encoder:" in line and " on " in line]
        return said[-1].split(" on ", 1)[1].split(", max_length")[0] if said else "unknown"

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self, timeout: float = 15.0) -> None:
        if self.process and self.process.poll() is None:
            stop_pid(self.process.pid, timeout)
        self.process = None


def stop_pid(pid: int, timeout: float = 15.0) -> None:
    """SIGTERM (Triton drains, then exits within --exit-timeout-secs), SIGKILL if it does not."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            finished, _ = os.waitpid(pid, os.WNOHANG)
            if finished:
                return
        except ChildProcessError:  # not our child (started by `up`): poll for existence instead
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="triton_server")
    parser.add_argument("action", choices=("up", "down"))
    parser.add_argument("--name", default=os.environ.get("RERANKER", "sample"), help="trained model (cache folder)")
    parser.add_argument("--repository", help="a Triton model repository (default: the named model's)")
    parser.add_argument("--grpc-port", type=int, default=int(os.environ.get("TRITON_GRPC_PORT", 8001)))
    parser.add_argument("--http-port", type=int, default=int(os.environ.get("TRITON_HTTP_PORT", 8000)))
    parser.add_argument("--metrics-port", type=int, default=int(os.environ.get("TRITON_METRICS_PORT", 8002)))
    args = parser.parse_args(argv)
    pid_file = state_dir() / "tritonserver.pid"
    if args.action == "down":
        if not pid_file.is_file():
            print("triton-down: no pid file; nothing started by triton-up")
            return 0
        pid = int(pid_file.read_text())
        stop_pid(pid)
        pid_file.unlink()
        print(f"tritonserver (pid {pid}) stopped")
        return 0
    repository = args.repository or default_repository(args.name)
    server = TritonServer(repository, args.grpc_port, args.http_port, args.metrics_port)
    if server.ready():
        print(f"tritonserver already serving {MODEL_NAME} on 127.0.0.1:{args.http_port}")
        return 0
    process = server.start().process
    assert process is not None  # start() launched it
    pid_file.write_text(str(process.pid))
    print(
        f"tritonserver pid {process.pid}: gRPC {server.grpc_address}, HTTP 127.0.0.1:{args.http_port}, "
        f"model repository {repository}; log {server.log_path}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
