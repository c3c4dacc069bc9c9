"""SQLite connections for stores shared by threads and processes: one per thread, WAL mode (a
writer never blocks readers), and a generous busy timeout instead of 'database is locked'."""

import contextlib
import sqlite3
import threading
from collections.abc import Iterator

# What SQLite says of a file that is not (or no longer) a database it can read.
_CORRUPT = ("malformed", "not a database")


class StoreUnreadable(sqlite3.DatabaseError):
    """A store's file cannot be opened: the message names the file and what an operator can do."""


class ThreadLocalSQLite:
    def __init__(self, path: str, pragmas: tuple[str, ...] = ()):
        self.path = path
        self.pragmas = pragmas  # extra statements for each new connection (PRAGMAs, its temp tables)
        self._local = threading.local()

    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = self._open()
            except sqlite3.DatabaseError as err:
                raise unreadable_store(self.path, err) from err
            self._local.conn = conn
        return conn

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA busy_timeout=30000")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        for pragma in self.pragmas:
            conn.execute(pragma)
        conn.row_factory = sqlite3.Row
        return conn


def unreadable_store(path: str, err: sqlite3.DatabaseError) -> StoreUnreadable:
    """The error for a store file SQLite refused to open, naming it and what an operator can do."""
    if any(word in str(err) for word in _CORRUPT):
        advice = (
            "the file is damaged or not a SQLite database: restore it from a backup, or move it aside and "
            "start again (an index is rebuilt by ingesting the sources again, keys by creating them again)"
        )
    else:
        advice = "check that its folder exists and this process may write there"
    return StoreUnreadable(f"{path} cannot be opened ({err}): {advice}")


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
