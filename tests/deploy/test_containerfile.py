"""The Containerfile without building it (`make image` and `make image-smoke` build and start it): hadolint's rules
pass, every file it copies is in the build context (not excluded by .containerignore), and what it runs exists."""

import fnmatch
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

from services.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
CONTAINERFILE = ROOT / "Containerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", CONTAINERFILE.read_text())
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            rows.append((word.upper(), rest.strip()))
    return rows


def ignored(path: str) -> bool:
    """.containerignore's patterns (Docker's rules): a path is excluded when it or a folder above it matches;
    `**/NAME` matches at any depth."""
    patterns = [p for p in (ROOT / ".containerignore").read_text().splitlines() if p and not p.startswith("#")]
    parts = Path(path).parts
    for pattern in patterns:
        for i, part in enumerate(parts):
            if fnmatch.fnmatch("/".join(parts[: i + 1]), pattern):
                return True
            if pattern.startswith("**/") and fnmatch.fnmatch(part, pattern.removeprefix("**/")):
                return True
    return False


def test_hadolint_passes():
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "hadolint"), str(CONTAINERFILE)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_copied_path_is_in_the_build_context():
    copies = [shlex.split(args) for word, args in instructions() if word == "COPY"]
    assert copies
    for *sources, _destination in copies:
        for source in sources:
            assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
            assert not ignored(source.rstrip("/")), f"COPY {source}: excluded by .containerignore"


def test_the_generated_stubs_reach_the_image_and_local_state_does_not():
    assert not ignored("clients/python/src/ragmesh/v1/gateway_pb2.py")  # `make stubs` output, copied with the client
    for local in (".venv/bin/python", ".git/HEAD", ".ragmesh-data/keys.sqlite", "shared/__pycache__/x.pyc"):
        assert ignored(local), local


def test_the_dependency_layer_installs_pyproject_dependencies():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (run,) = [args for word, args in instructions() if word == "RUN" and "tomllib" in args]
    assert "['project']['dependencies']" in run and "--no-index --find-links /wheels" in run
    assert any(d.startswith("ragmesh-client") for d in dependencies)  # installed from clients/python instead


def test_the_default_command_is_ragmesh_up():
    (cmd,) = [args for word, args in instructions() if word == "CMD"]
    assert cmd.startswith('["ragmesh", "up"')
    build_parser().parse_args(["up", "--data-dir", "/var/lib/ragmesh"])
