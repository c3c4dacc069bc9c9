"""A real Prometheus server (Debian's `prometheus` package, which `make promtool` installs) on a free loopback port,
for the tests that check what it scrapes and which alerts fire."""

import contextlib
import json
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import yaml

from services.cli.mesh import free_port


def api(base: str, path: str, **params) -> dict:
    """The `data` of a Prometheus HTTP API answer (asserting it succeeded)."""
    url = f"{base}{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
    with urllib.request.urlopen(url, timeout=5) as reply:
        body = json.load(reply)
    assert body["status"] == "success", body
    return body["data"]


@contextlib.contextmanager
def running_prometheus(config: dict, folder: Path) -> Iterator[str]:
    """Prometheus with this config (checked by promtool first), its data and log in `folder`; yields its base URL
    once ready and stops it by pid afterwards."""
    binary = shutil.which("prometheus")
    assert binary, "Prometheus is not installed: `make promtool` installs Debian's prometheus package"
    path = folder / "prometheus.yml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    check = subprocess.run(["promtool", "check", "config", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    port = free_port()
    log = open(folder / "prometheus.log", "wb")
    proc = subprocess.Popen(
        [
            binary,
            f"--config.file={path}",
            f"--storage.tsdb.path={folder / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (folder / "prometheus.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"{base}/-/ready", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "Prometheus not ready in 60 s"
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
