"""The `ragmesh` command as a real process against the real mesh: options after the subcommand, the
abstention exit status, --json with false booleans, and a closed stdout."""

import json
import os
import subprocess
import sys

import pytest

from services.cli.main import EXIT_ABSTAINED, EXIT_BROKEN_PIPE
from services.cli.mesh import ROOT_DIR
from shared.credentials import API_KEY_ENV
from tests.support.mesh import TENANT

pytestmark = pytest.mark.integration

ANSWERED = "how much is the Team plan per month"
UNANSWERABLE = "what is the parental leave policy"


@pytest.fixture(scope="module")
def cli(mesh, ingested):
    env = {k: v for k, v in os.environ.items() if k != API_KEY_ENV}
    env["RAGMESH_DATA_DIR"] = mesh.data_dir  # the mesh's local key for the tenant
    mesh.key_for(TENANT)
    gateway = mesh.address("gateway")

    def run(*args, stdout=subprocess.PIPE):
        # Global options after the subcommand, and a wrong gateway before it that they override.
        argv = [
            sys.executable,
            "-m",
            "services.cli.main",
            "--gateway",
            "127.0.0.1:1",
            *args,
            "--tenant",
            TENANT,
            "--gateway",
            gateway,
            "--timeout",
            "60",
        ]
        return subprocess.run(argv, cwd=ROOT_DIR, env=env, stdout=stdout, stderr=subprocess.PIPE, timeout=180)

    return run


def test_an_answer_exits_0_and_its_json_has_false_booleans(cli):
    done = cli("ask", ANSWERED, "--json")
    assert done.returncode == 0, done.stderr.decode()
    out = json.loads(done.stdout)
    assert out["answer"]["abstained"] is False
    assert out["degraded"] is False
    assert out["answer"]["citations"] and out["answer_id"]


def test_an_abstention_exits_4(cli):
    done = cli("ask", UNANSWERABLE)
    assert done.returncode == EXIT_ABSTAINED, done.stderr.decode()
    assert done.stdout.decode().startswith("No answer")
    as_json = cli("ask", UNANSWERABLE, "--json")
    assert as_json.returncode == EXIT_ABSTAINED
    assert json.loads(as_json.stdout)["answer"]["abstained"] is True


def test_search_into_a_closed_pipe_ends_quietly(cli):
    read, write = os.pipe()
    os.close(read)
    try:
        done = cli("search", "refund policy", "--json", stdout=write)
    finally:
        os.close(write)
    assert done.returncode == EXIT_BROKEN_PIPE
    assert b"Traceback" not in done.stderr and b"BrokenPipe" not in done.stderr, done.stderr.decode()


def test_search_piped_into_head(cli, mesh):
    env = {k: v for k, v in os.environ.items() if k != API_KEY_ENV}
    env["RAGMESH_DATA_DIR"] = mesh.data_dir
    done = subprocess.run(
        f"{sys.executable} -m services.cli.main search 'refund policy' --top-k 50 --json --tenant {TENANT} "
        f"--gateway {mesh.address('gateway')} | head -c 100",
        shell=True,
        cwd=ROOT_DIR,
        env=env,
        capture_output=True,
        timeout=180,
    )
    assert done.returncode == 0
    assert done.stdout.startswith(b"{") and len(done.stdout) == 100
    assert done.stderr == b"", done.stderr.decode()


def test_open_marks_the_cited_quote(cli):
    quote = json.loads(cli("ask", ANSWERED, "--json").stdout)["answer"]["citations"][0]["quote"]
    done = cli("ask", ANSWERED, "--open")
    assert done.returncode == 0, done.stderr.decode()
    assert f">>>{quote}<<<" in done.stdout.decode()


def test_documents_lists_the_versions_and_deleting_an_unknown_id_fails(cli, mesh):
    listed = cli("documents", "--json")
    assert listed.returncode == 0, listed.stderr.decode()
    documents = json.loads(listed.stdout)["documents"]
    assert documents and all(d["chunks"] >= 1 and d["access_scopes"] and d["source_uri"] for d in documents)
    table = cli("documents").stdout.decode()
    first = documents[0]
    assert f"{first['document_id']}@{first['version']}  {first['chunks']} chunks" in table
    assert f"{len({d['document_id'] for d in documents})} documents, {len(documents)} versions" in table

    missing = cli("delete", "no/such-document")  # it used to print "0 chunks removed" and exit 0
    assert missing.returncode == 1 and b"no document 'no/such-document'" in missing.stderr


def test_a_file_replacing_another_of_the_same_run_is_reported(mesh, tmp_path):
    """Across the CLI's requests (8 documents each) the gateway cannot refuse the second file giving one document
    version; the CLI says that it replaced the first and exits 2, instead of two "ok" lines."""
    tenant = "cli-duplicates"
    for n in range(9):  # a.md and i.md land in different requests
        doc_id = "shared/id" if n in (0, 8) else f"doc-{n}"
        (tmp_path / f"{chr(97 + n)}.md").write_text(f"---\ndoc_id: {doc_id}\n---\n# Note {n}\n\nNote number {n}.\n")
    env = {k: v for k, v in os.environ.items() if k != API_KEY_ENV}
    env[API_KEY_ENV] = mesh.key_for(tenant)
    argv = [sys.executable, "-m", "services.cli.main", "ingest", str(tmp_path), "--gateway", mesh.address("gateway")]
    done = subprocess.run(argv, cwd=ROOT_DIR, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "FAILED i.md: shared/id@1 was also given by a.md earlier in this run" in done.stdout
    assert "8 documents ingested, 1 failed" in done.stdout


def test_a_second_mesh_on_a_data_dir_in_use_is_refused(mesh):
    """`ragmesh up --free-ports` on a data dir a running mesh uses started a second mesh over the same index,
    answer log and keys without a word."""
    argv = [sys.executable, "-m", "services.cli.main", "up", "--free-ports", "--data-dir", mesh.data_dir]
    done = subprocess.run(argv, cwd=ROOT_DIR, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"another mesh (launcher pid {os.getpid()}) is running on the data dir {mesh.data_dir}" in done.stderr
    assert "SERVING" not in done.stdout


def test_the_demo_removes_the_folder_it_made_and_keeps_one_it_was_given(tmp_path):
    """`make demo` left a ragmesh-demo-* folder in /tmp on every run: an index, an answer log and an API key's
    secret. A real demo run (its own mesh) over a one-document corpus."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "kettle.md").write_text("# Kettle\n\nThe Zephyr kettle holds 1.7 litres and boils in 3 minutes.\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    argv = [sys.executable, "-m", "services.cli.main", "demo", "--corpus", str(corpus)]
    done = subprocess.run(argv, cwd=ROOT_DIR, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "1 documents ingested, 0 failed" in done.stdout and "removing its data" in done.stdout
    assert not [p for p in temp.iterdir() if p.name.startswith("ragmesh-demo-")]
    kept = tmp_path / "kept"
    done = subprocess.run(
        [*argv, "--data-dir", str(kept)], cwd=ROOT_DIR, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0 and (kept / "answers.sqlite").exists()
