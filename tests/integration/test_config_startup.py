"""A real stage process refuses to start on a RAGMESH_* variable that is not a setting, and says what was meant."""

import os
import subprocess
import sys

import pytest

from services.cli.mesh import ROOT_DIR, free_port

pytestmark = pytest.mark.integration


def start(stage: str, extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {
        **{name: value for name, value in os.environ.items() if not name.startswith("RAGMESH_")},
        f"RAGMESH_{stage.upper()}_PORT": str(free_port()),
        f"RAGMESH_{stage.upper()}_METRICS_PORT": "0",
        **extra,
    }
    # A stage that started anyway would serve until killed: the timeout fails the test.
    return subprocess.run(
        [sys.executable, "-m", f"services.{stage}.server"],
        env=env,
        cwd=ROOT_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("stage", "variable", "message"),
    [
        (
            "generator",
            "RAGMESH_GENERATOR_MAX_TOKEN",
            "RAGMESH_GENERATOR_MAX_TOKEN is not a ragmesh setting; did you mean RAGMESH_GENERATOR_MAX_TOKENS?",
        ),
        (
            "chunker",
            "RAGMESH_MAX_TOKENS",
            "did you mean RAGMESH_CHUNKER_MAX_TOKENS or RAGMESH_GENERATOR_MAX_TOKENS?",
        ),
    ],
)
def test_an_unknown_variable_stops_start_up_with_the_suggestion(stage, variable, message):
    done = start(stage, {variable: "300"})
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"ragmesh {stage}: " in done.stderr and message in done.stderr, done.stderr
    assert "listening" not in done.stdout
