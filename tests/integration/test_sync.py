"""`ragmesh sync` against a real mesh: add, change, remove and rename files; unchanged files are not
re-sent; an empty folder does not erase the tenant without --allow-empty; a source that cannot be read
erases nothing."""

import os
import subprocess
import sys

import pytest

from services.cli.mesh import ROOT_DIR
from shared.credentials import API_KEY_ENV
from shared.stubs import gateway_pb2, retriever_pb2

pytestmark = pytest.mark.integration
TENANT = "sync-test"


def _sync(mesh, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != API_KEY_ENV}
    env["RAGMESH_DATA_DIR"] = mesh.data_dir
    argv = [sys.executable, "-m", "services.cli.main", "sync", *args, "--tenant", TENANT]
    argv += ["--gateway", mesh.address("gateway"), "--timeout", "300"]
    return subprocess.run(argv, cwd=ROOT_DIR, env=env, capture_output=True, text=True, timeout=600)


def _stored(gateway) -> dict[str, str]:
    listed = gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=TENANT), timeout=30)
    return {d.source_uri: d.source_sha256 for d in listed.documents}


def _hits(gateway, query: str) -> set[str]:
    found = gateway.Search(
        gateway_pb2.SearchRequest(tenant_id=TENANT, query=query, top_k=10, mode=retriever_pb2.RETRIEVAL_MODE_BM25),
        timeout=60,
    )
    return {r.chunk.meta.document_id for r in found.results}


def _synced_folder(mesh, tmp_path, name: str, text: str):
    """A source folder holding one file, synced once."""
    mesh.key_for(TENANT)
    src = tmp_path / "src"
    src.mkdir()
    (src / name).write_text(text)
    first = _sync(mesh, str(src))
    assert first.returncode == 0, first.stdout + first.stderr
    return src


def test_sync_follows_the_folder(mesh, gateway, tmp_path):
    mesh.key_for(TENANT)
    src = tmp_path / "src"
    (src / "hr").mkdir(parents=True)
    (src / "a.md").write_text("# Parking\n\nVisitors park on level Zephyr-3 of the Larkspur garage.\n")
    (src / "hr" / "b.md").write_text("# Leave\n\nParental leave is sixteen weeks at full pay.\n")
    (src / "c.md").write_text("# Canteen\n\nThe canteen serves Marrowbone soup on Fridays.\n")

    first = _sync(mesh, str(src))
    assert first.returncode == 0, first.stderr
    assert "3 to add" in first.stdout and set(_stored(gateway)) == {"a.md", "hr/b.md", "c.md"}

    again = _sync(mesh, str(src))
    assert again.returncode == 0 and "3 unchanged" in again.stdout and "ok " not in again.stdout

    (src / "hr" / "b.md").write_text("# Leave\n\nParental leave is twenty weeks at full pay.\n")
    (src / "c.md").unlink()
    (src / "a.md").rename(src / "parking.md")
    before = _stored(gateway)
    plan = _sync(mesh, str(src), "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert "rename a.md -> parking.md" in plan.stdout and "change hr/b.md" in plan.stdout
    assert "remove c.md (c.md)" in plan.stdout and _stored(gateway) == before  # a dry run changes nothing

    applied = _sync(mesh, str(src))
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert applied.stdout.count("verified") == 2  # a.md and c.md went through the verified erasure
    stored = _stored(gateway)
    assert set(stored) == {"parking.md", "hr/b.md"} and stored["hr/b.md"] != before["hr/b.md"]
    assert "c.md" not in _hits(gateway, "Marrowbone soup canteen")
    assert _hits(gateway, "Zephyr-3 Larkspur garage") == {"parking.md"}
    assert "hr/b.md" in _hits(gateway, "twenty weeks parental leave")


def test_an_empty_or_unreadable_source_erases_nothing(mesh, gateway, tmp_path):
    _synced_folder(mesh, tmp_path, "keep.md", "# Keys\n\nSpare keys are kept in cabinet Obsidian-7.\n")
    kept = _stored(gateway)
    assert "keep.md" in kept

    missing = _sync(mesh, str(tmp_path / "not-there"))
    assert missing.returncode == 1 and "nothing was changed or erased" in missing.stderr
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "keep.md").write_text("# Keys\n\nSpare keys are kept in cabinet Obsidian-7.\n")
    (broken / "lost.md").symlink_to(tmp_path / "gone-target.md")  # listed, but reading it fails
    unreadable = _sync(mesh, str(broken))
    assert unreadable.returncode == 1 and "lost.md" in unreadable.stderr
    assert _stored(gateway) == kept

    empty = tmp_path / "empty"
    empty.mkdir()
    refused = _sync(mesh, str(empty))
    assert refused.returncode == 2 and "--allow-empty" in refused.stderr and _stored(gateway) == kept
    allowed = _sync(mesh, str(empty), "--allow-empty")
    assert allowed.returncode == 0, allowed.stderr
    assert _stored(gateway) == {}


def test_a_file_reverted_to_an_older_version_is_a_change(mesh, gateway, tmp_path):
    """Compared with any stored version, the reverted file looked unchanged while version 2 stayed current."""
    text = "---\ndoc_id: kiosk\nversion: '{v}'\n---\n# Kiosk\n\nThe lobby kiosk code is {code}.\n"
    src = _synced_folder(mesh, tmp_path, "kiosk.md", text.format(v=1, code="Quillon-41"))
    (src / "kiosk.md").write_text(text.format(v=2, code="Brambleton-77"))
    assert "change kiosk.md" in _sync(mesh, str(src)).stdout
    assert _hits(gateway, "lobby kiosk code") == {"kiosk"}
    (src / "kiosk.md").write_text(text.format(v=1, code="Quillon-41"))
    reverted = _sync(mesh, str(src))
    assert reverted.returncode == 0 and "change kiosk.md" in reverted.stdout, reverted.stdout
    found = gateway.Search(gateway_pb2.SearchRequest(tenant_id=TENANT, query="lobby kiosk code", top_k=5), timeout=60)
    assert [(r.chunk.meta.version, "Quillon-41" in r.chunk.body) for r in found.results] == [("1", True)]
    assert "0 to add, 0 changed, 0 to erase, 1 unchanged" in _sync(mesh, str(src)).stdout


def test_renaming_a_file_that_states_its_doc_id_keeps_the_document(mesh, gateway, tmp_path):
    """The renamed file is ingested under the same doc_id; erasing the old file's document used to erase it."""
    text = "---\ndoc_id: policy/leave\n---\n# Leave\n\nSabbatical leave is Wrenfield-9 weeks.\n"
    src = _synced_folder(mesh, tmp_path, "leave.md", text)
    (src / "leave.md").rename(src / "leave-policy.md")
    dry = _sync(mesh, str(src), "--dry-run")  # predicted from the front matter; it used to say "1 to erase"
    assert "keep   leave.md (policy/leave)" in dry.stdout and "1 to add, 0 changed, 0 to erase" in dry.stdout
    renamed = _sync(mesh, str(src))
    assert renamed.returncode == 0, renamed.stdout + renamed.stderr
    assert "kept   leave.md (policy/leave)" in renamed.stdout and "erased leave.md" not in renamed.stdout
    assert _hits(gateway, "Sabbatical leave Wrenfield-9") == {"policy/leave"}
    assert _stored(gateway) == {"leave-policy.md": _stored(gateway)["leave-policy.md"]}
    assert "0 to add, 0 changed, 0 to erase, 1 unchanged" in _sync(mesh, str(src)).stdout


def test_a_file_giving_an_unchanged_files_document_is_reported(mesh, gateway, tmp_path):
    """A new file whose front matter repeats an unchanged file's doc_id replaces that file's text; sync says
    so (it used to print "ok"), fails the run and so erases nothing in it."""
    text = "---\ndoc_id: rota\n---\n# Rota\n\nThe {day} rota is kept by {who}.\n"
    src = _synced_folder(mesh, tmp_path, "rota.md", text.format(day="Monday", who="Ossory-5"))
    (src / "gone.md").write_text("# Gone\n\nThe Gallowglass-8 form is retired.\n")
    assert _sync(mesh, str(src)).returncode == 0
    (src / "gone.md").unlink()
    (src / "rota-copy.md").write_text(text.format(day="Tuesday", who="Pellinore-2"))
    run = _sync(mesh, str(src))
    assert run.returncode == 2, run.stdout + run.stderr
    assert "FAILED rota-copy.md: rota@1 was also given by rota.md (unchanged in the folder)" in run.stdout
    assert "no document was erased in this run" in run.stdout and "gone.md" in _stored(gateway)


def test_files_no_parser_reads_are_skipped_and_do_not_stop_the_erasure(mesh, gateway, tmp_path):
    """A Markdown folder's diagram failed every run ("unsupported content type"), so sync never erased a
    removed file and always exited 2."""
    src = _synced_folder(mesh, tmp_path, "guide.md", "# Guide\n\nThe Tarnwick-4 guide. ![diagram](diagram.png)\n")
    (src / "diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    (src / "old.md").write_text("# Old\n\nThe Quillon-7 form is retired.\n")
    assert _sync(mesh, str(src)).returncode == 0
    (src / "old.md").unlink()
    run = _sync(mesh, str(src))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "skipped 1 files of a type no parser reads (.png): diagram.png" in run.stdout
    assert "erased old.md (old.md): verified" in run.stdout
    assert set(_stored(gateway)) == {"guide.md"}
