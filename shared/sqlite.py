"""SQLite connections for stores shared by threads and processes: one per thread, WAL mode (a
writer never blocks readers), and a generous busy timeout instead of 'database is locked'."""

import contextlib
import sqlite3
import threading
from collections.abc import Iterator


class ThreadLocalSQLite:
    def __init__(self, path: str, pragmas: tuple[str, ...] = ()):
        self.path = path
        self.pragmas = pragmas  # extra statements for each new connection (PRAGMAs, its temp tables)
        self._local = threading.local()

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
            for pragma in self.pragmas:
                conn.execute(pragma)
            conn.row_factory = sqlite3.Row
            self._local.conn = conn
        return conn


@contextlib.contextmanager
def write_transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One writer at a time (BEGIN IMMEDIATE takes the write lock up front, so two writers never deadlock
    upgrading read locks); committed when the block ends, rolled back when it raises."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
