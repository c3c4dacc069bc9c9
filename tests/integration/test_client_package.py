"""The Python client installs on its own: a wheel of clients/python into a fresh virtual environment, its
requirements resolved by pip, imports `ragmesh.client` and the stubs `ragmesh.v1` without the server's
packages or its ML stack."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"
# What the client may bring along: itself, grpcio and protobuf (and what those two require).
ALLOWED = {"ragmesh-client", "grpcio", "protobuf", "typing-extensions", "typing_extensions", "pip", "setuptools"}


def run(*args: str, cwd: Path) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_client_installs_alone_into_a_fresh_venv(tmp_path):
    assert (CLIENT / "src" / "ragmesh" / "v1" / "gateway_pb2_grpc.py").exists(), "run `make stubs` first"
    wheels = tmp_path / "wheels"
    # Built with this environment's setuptools (no build isolation: nothing to download for the build).
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--no-build-isolation",
        "-w",
        str(wheels),
        str(CLIENT),
        cwd=tmp_path,
    )
    [wheel] = wheels.glob("ragmesh_client-*.whl")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", str(venv), cwd=tmp_path)
    python = str(venv / "bin" / "python")
    run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel), cwd=tmp_path)
    run(python, "-m", "pip", "check", cwd=tmp_path)
    installed = {p["name"].lower() for p in json.loads(run(python, "-m", "pip", "list", "--format=json", cwd=tmp_path))}
    assert installed <= ALLOWED, installed - ALLOWED
    probe = (
        "import importlib.util, ragmesh.client, ragmesh.v1.gateway_pb2_grpc as g;"
        "from ragmesh.client import RagmeshClient;"
        "assert hasattr(g, 'GatewayStub');"
        "assert all(importlib.util.find_spec(n) is None for n in ('services', 'shared', 'torch', 'numpy', 'fastapi'));"
        "print(ragmesh.client.__file__)"
    )
    where = run(python, "-c", probe, cwd=tmp_path)  # cwd: not the checkout, so nothing is found from there
    assert str(venv) in where
