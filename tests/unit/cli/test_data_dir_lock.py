"""One mesh per data dir: a second holder is refused naming the first one's pid, a lock whose holder died
is free again (the kernel drops an flock with its process), and a released lock can be taken again."""

import os
import subprocess
import sys

import pytest

from services.cli.mesh import LOCK_FILE, DataDirLock, MeshError


def test_a_second_mesh_on_the_data_dir_is_refused_until_the_first_releases(tmp_path):
    first = DataDirLock(str(tmp_path))
    first.acquire()
    with pytest.raises(MeshError, match=f"launcher pid {os.getpid()}") as err:
        DataDirLock(str(tmp_path)).acquire()
    assert str(tmp_path) in str(err.value) and "--data-dir" in str(err.value)
    first.release()
    again = DataDirLock(str(tmp_path))
    again.acquire()
    again.release()


def test_a_lock_held_by_a_process_that_died_is_free(tmp_path):
    holder = (
        "import sys; from services.cli.mesh import DataDirLock; "
        f"DataDirLock({str(tmp_path)!r}).acquire(); print('held', flush=True); sys.stdin.read()"
    )
    proc = subprocess.Popen([sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "held\n"
        with pytest.raises(MeshError, match=f"launcher pid {proc.pid}"):
            DataDirLock(str(tmp_path)).acquire()
    finally:
        proc.kill()
        proc.wait()
    assert (tmp_path / LOCK_FILE).read_text() == str(proc.pid)  # the file stays; its lock went with the process
    lock = DataDirLock(str(tmp_path))
    lock.acquire()
    assert (tmp_path / LOCK_FILE).read_text() == str(os.getpid())
    lock.release()


def test_a_data_dir_that_cannot_be_written_is_a_mesh_error_not_a_traceback(tmp_path):
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    with pytest.raises(MeshError, match="data dir cannot be written .*Not a directory"):
        DataDirLock(str(not_a_dir)).acquire()
