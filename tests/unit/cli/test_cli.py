"""The `ragmesh` command as a Unix tool, without a mesh: --version, global options on either side of the
subcommand, --json with false booleans, and a reader that goes away (tests/integration/test_cli.py runs
the same against a real mesh)."""

import importlib.metadata
import json
import os
import socket
import subprocess
import sys

import pytest

from services.cli.main import EXIT_BROKEN_PIPE, _json, build_parser
from shared.stubs import common_pb2, gateway_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def ragmesh(*args, stdout=subprocess.PIPE, env=None):
    return subprocess.run(
        [sys.executable, "-m", "services.cli.main", *args],
        cwd=ROOT,
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=env,
        timeout=120,
    )


def test_version():
    done = ragmesh("--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().strip() == f"ragmesh {importlib.metadata.version('ragmesh')}"


@pytest.mark.parametrize(
    "argv",
    [
        ["ask", "q", "--timeout", "5", "--gateway", "h:1"],
        ["--timeout", "5", "--gateway", "h:1", "ask", "q"],
        ["--timeout", "9", "ask", "q", "--timeout", "5", "--gateway", "h:1"],  # the later one wins
        ["search", "q", "--gateway", "h:1", "--timeout", "5", "--json"],
        ["ingest", "x.md", "--timeout", "5", "--gateway", "h:1"],
        ["delete", "doc", "--timeout", "5", "--gateway", "h:1"],
        ["feedback", "send", "a1", "up", "--timeout", "5", "--gateway", "h:1"],
    ],
)
def test_global_options_work_before_and_after_the_subcommand(argv):
    args = build_parser().parse_args(argv)
    assert (args.timeout, args.gateway) == (5.0, "h:1")


def test_global_options_keep_their_defaults_when_not_given():
    top = build_parser().parse_args(["--timeout", "7", "ask", "q"])
    assert top.timeout == 7.0
    plain = build_parser().parse_args(["ask", "q"])
    assert plain.timeout == 120.0 and plain.gateway


def test_json_prints_false_booleans_and_proto_field_names():
    response = gateway_pb2.AskResponse(answer=common_pb2.Answer(text="yes"), answer_id="a1")
    out = json.loads(_json(response))
    assert out["answer"]["abstained"] is False
    assert out["degraded"] is False
    assert out["suggested_reading"] == [] and out["top_rerank_score"] == 0
    assert out["answer_id"] == "a1"


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path, unbuffered):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    assert ragmesh("keys", "create", "--tenant", "acme", "--data-dir", str(tmp_path), env=env).returncode == 0
    read, write = os.pipe()
    os.close(read)  # like `| head` that has already exited: every write is EPIPE
    try:
        done = ragmesh("keys", "list", "--data-dir", str(tmp_path), stdout=write, env=env)
    finally:
        os.close(write)
    assert done.stderr == b""
    assert done.returncode == EXIT_BROKEN_PIPE


# Subcommands defined by the CLI package itself (the evaluation and training commands document their own).
CLI_COMMANDS = {
    "up",
    "ingest",
    "ask",
    "search",
    "delete",
    "documents",
    "keys",
    "certs",
    "feedback",
    "triage",
    "copy-index",
    "demo",
}


def undocumented(parser, path):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                if path or name in CLI_COMMANDS:
                    yield from undocumented(sub, [*path, name])
        elif not action.help and action.dest != "help":
            yield " ".join(path + [action.option_strings[0] if action.option_strings else action.dest])


def test_every_option_of_the_cli_commands_has_help_and_every_command_is_listed():
    parser = build_parser()
    assert list(undocumented(parser, [])) == []
    listed = ragmesh("--help").stdout.decode()
    for name in CLI_COMMANDS:
        assert f"\n    {name} " in listed, name


def test_up_fails_before_starting_any_stage_when_its_metrics_port_is_taken(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = ragmesh("up", "--free-ports", "--data-dir", str(tmp_path), "--metrics-port", str(port))
    assert done.returncode == 1
    assert f"metrics port 127.0.0.1:{port}" in done.stderr.decode()
    assert not (tmp_path / "logs").exists()  # no stage was started


@pytest.mark.parametrize("days", ["0", "-5", "inf", "nan", "soon"])
def test_a_key_expiry_in_days_must_be_a_positive_number(tmp_path, days):
    """0 used to make a key that never expires, -5 one already expired, inf a traceback."""
    done = ragmesh("keys", "create", "--tenant", "acme", "--expires-in-days", days, "--data-dir", str(tmp_path))
    assert done.returncode == 2 and b"--expires-in-days" in done.stderr and b"Traceback" not in done.stderr


def test_no_gateway_listening_says_how_to_start_one():
    with socket.socket() as sock:  # a loopback port nothing listens on: bound, never listened
        sock.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{sock.getsockname()[1]}"
        done = ragmesh("ask", "refund window", "--gateway", address, "--timeout", "10")
    err = done.stderr.decode()
    assert done.returncode == 1 and "UNAVAILABLE" in err
    assert f"nothing answers at {address}: start the mesh with `ragmesh up`" in err
