"""A store file SQLite cannot open fails with its path and what an operator can do, not a bare sqlite3 error."""

import sqlite3

import pytest

from shared.keys import KeyStore
from shared.sqlite import StoreUnreadable, ThreadLocalSQLite


def test_a_damaged_file_is_named_with_the_way_out(tmp_path):
    path = tmp_path / "index-model.sqlite"
    good = ThreadLocalSQLite(str(path)).connection()
    good.execute("CREATE TABLE t (x)")
    good.close()
    path.write_bytes(path.read_bytes()[:50] + b"\xff" * 4000)  # the header's magic kept, the rest overwritten

    with pytest.raises(StoreUnreadable) as err:
        ThreadLocalSQLite(str(path)).connection()
    assert str(path) in str(err.value) and "restore it from a backup" in str(err.value)
    assert isinstance(err.value, sqlite3.DatabaseError)  # callers catching sqlite3's errors still do


def test_a_folder_that_is_not_there_is_named(tmp_path):
    path = tmp_path / "missing" / "answers.sqlite"
    with pytest.raises(StoreUnreadable, match="check that its folder exists") as err:
        ThreadLocalSQLite(str(path)).connection()
    assert str(path) in str(err.value)


def test_a_damaged_key_store_is_named(tmp_path):
    path = tmp_path / "keys.sqlite"
    path.write_bytes(b"not a database at all " * 100)
    with pytest.raises(StoreUnreadable, match="restore it from a backup") as err:
        KeyStore(str(path)).list()
    assert str(path) in str(err.value)
