"""Stage log files under `ragmesh up`: bounded in size, and read from their end.

Each stage writes its stdout and stderr to `logs/<stage>.log`, opened for appending (O_APPEND), so the launcher
can rotate a file the stage keeps writing the way logrotate's copytruncate does: copy it to `<stage>.log.1`
(older copies shift to .2, .3, ...), then truncate it in place; the stage's next write lands at the new end.
Lines written between the copy and the truncation are lost (the copy's time: tens of milliseconds at 50 MB),
the price of a log that otherwise grows without bound (the HTTP door logs every request).
"""

import os
import shutil
from pathlib import Path
from typing import BinaryIO

# Bytes read from a log's end for its last lines (a crash report shows a few): never the whole file.
TAIL_BYTES = 64 * 1024


def open_for_stage(path: Path) -> BinaryIO:
    """A stage's log for its stdout: appended to (O_APPEND, so it can be rotated under the stage) and readable
    by the mesh's user only (logs hold questions unless privacy is strict)."""
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab")


def tail(path: Path, lines: int) -> str:
    """The last `lines` lines of the file, read from its last TAIL_BYTES only."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read()
    except FileNotFoundError:
        return ""
    text = data.decode("utf-8", errors="replace")
    kept = text.splitlines()
    if size > TAIL_BYTES and kept:
        kept = kept[1:]  # the first line read is most likely cut
    return "\n".join(kept[-lines:])


def rotate_if_large(path: Path, max_bytes: int, backups: int) -> bool:
    """Copies the file to .1 (shifting older copies, the oldest dropped) and empties it, when it is over
    `max_bytes`. True when it rotated."""
    try:
        if path.stat().st_size <= max_bytes:
            return False
    except FileNotFoundError:
        return False
    if backups > 0:
        for n in range(backups - 1, 0, -1):
            older = path.with_name(f"{path.name}.{n}")
            if older.exists():
                older.replace(path.with_name(f"{path.name}.{n + 1}"))
        shutil.copyfile(path, path.with_name(f"{path.name}.1"))
    os.truncate(path, 0)
    return True
