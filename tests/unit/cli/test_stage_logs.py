"""Stage logs stay bounded while their stage writes to them, and a crash report reads only their end."""

import subprocess
import sys
import time

from services.cli import stage_logs


def test_rotation_keeps_the_newest_copies_and_the_writer_goes_on_at_the_start(tmp_path):
    path = tmp_path / "http.log"
    # A real stage's way of writing: a child process with the file, opened for appending, as its stdout.
    with open(path, "ab") as out:
        writer = subprocess.Popen(
            [sys.executable, "-u", "-c", "import sys\nfor line in sys.stdin: print(line.strip(), flush=True)"],
            stdin=subprocess.PIPE,
            stdout=out,
            text=True,
        )
    try:
        for n in range(4):
            writer.stdin.write(f"{n}:" + "x" * 2000 + "\n")
            writer.stdin.flush()
            _wait_for(lambda n=n: path.stat().st_size >= 2003 * 1, f"line {n}")
            assert stage_logs.rotate_if_large(path, max_bytes=1000, backups=2)
            assert path.stat().st_size == 0
        writer.stdin.write("after\n")
        writer.stdin.flush()
        _wait_for(lambda: path.stat().st_size > 0, "the line after the last rotation")
    finally:
        writer.stdin.close()
        writer.wait(10)
    # Appending after a truncation writes at the new end: no hole of NULs where the old bytes were.
    assert path.read_bytes() == b"after\n"
    assert (tmp_path / "http.log.1").read_text().startswith("3:")
    assert (tmp_path / "http.log.2").read_text().startswith("2:")
    assert not (tmp_path / "http.log.3").exists()  # two copies kept
    assert not stage_logs.rotate_if_large(path, max_bytes=1000, backups=2)  # under the size: left alone


def test_tail_reads_the_last_lines_of_a_large_log_from_its_end(tmp_path):
    path = tmp_path / "gateway.log"
    path.write_text("".join(f"line {i}\n" for i in range(200_000)))  # ~2.3 MB
    assert stage_logs.tail(path, 3) == "line 199997\nline 199998\nline 199999"
    assert stage_logs.tail(path, 10**6).splitlines()[0].startswith("line ")  # no cut first line
    assert len(stage_logs.tail(path, 10**6)) <= stage_logs.TAIL_BYTES
    assert stage_logs.tail(tmp_path / "missing.log", 5) == ""


def _wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)
