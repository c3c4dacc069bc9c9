"""The load test's cached index: keyed by what decides an ingest, copied consistently, never half written."""

import os
import sqlite3

from loadtest import snapshot
from shared.stubs import common_pb2


def _documents(*texts: str) -> list[common_pb2.SourceDocument]:
    return [
        common_pb2.SourceDocument(meta=common_pb2.DocumentMeta(document_id=f"doc-{i}"), content=text.encode())
        for i, text in enumerate(texts)
    ]


def test_the_key_follows_documents_and_settings_but_not_ports():
    env = {"RAGMESH_INDEX": "embedded", "RAGMESH_CHUNKER_PORT": "5001", "RAGMESH_DATA_DIR": "/tmp/a", "PATH": "/x"}
    base = snapshot.key(_documents("alpha", "beta"), "t", env)
    other_run = {**env, "RAGMESH_CHUNKER_PORT": "6001", "RAGMESH_DATA_DIR": "/tmp/b", "PATH": "/y"}
    assert snapshot.key(_documents("alpha", "beta"), "t", other_run) == base
    assert snapshot.key(_documents("alpha", "beta!"), "t", env) != base
    assert snapshot.key(_documents("alpha"), "t", env) != base
    assert snapshot.key(_documents("alpha", "beta"), "u", env) != base
    assert snapshot.key(_documents("alpha", "beta"), "t", {**env, "RAGMESH_CHUNKER_OVERLAP_RATIO": "0.2"}) != base
    scheduling = {**env, "RAGMESH_GATEWAY_MAX_IN_FLIGHT": "4", "RAGMESH_INDEXER_MAX_WORKERS": "2"}
    assert snapshot.key(_documents("alpha", "beta"), "t", scheduling) == base


def test_the_key_follows_the_ingest_code(tmp_path):
    (tmp_path / "shared").mkdir()
    module = tmp_path / "shared" / "text.py"
    module.write_text("A = 1\n")
    before = snapshot._code_digest(tmp_path)
    module.write_text("A = 2\n")
    assert snapshot._code_digest(tmp_path) != before


def test_opensearch_code_and_settings_are_not_part_of_an_embedded_snapshot(tmp_path):
    index = tmp_path / "shared" / "index"
    index.mkdir(parents=True)
    (index / "embedded.py").write_text("A = 1\n")
    (index / "opensearch.py").write_text("B = 1\n")
    before = snapshot._code_digest(tmp_path)
    (index / "opensearch.py").write_text("B = 2\n")
    assert snapshot._code_digest(tmp_path) == before
    (index / "embedded.py").write_text("A = 2\n")
    assert snapshot._code_digest(tmp_path) != before

    env = {"RAGMESH_INDEX": "embedded"}
    base = snapshot.key(_documents("alpha"), "t", env)
    opensearch = {"RAGMESH_OPENSEARCH_EF_SEARCH": "1024", "RAGMESH_OPENSEARCH_SHARDS": "3", "OPENSEARCH_URL": "x"}
    assert snapshot.key(_documents("alpha"), "t", {**env, **opensearch}) == base
    assert snapshot.key(_documents("alpha"), "t", {**env, "RAGMESH_EMBED_MODEL": "intfloat/e5-small-v2"}) != base


def test_save_and_restore_the_index_but_not_keys_answers_or_logs(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    writer = sqlite3.connect(data / "index-model.sqlite", isolation_level=None)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("CREATE TABLE chunks (id TEXT)")
    writer.executemany("INSERT INTO chunks VALUES (?)", [("a",), ("b",)])  # committed, still in the WAL
    (data / "keys.sqlite").write_bytes(b"secret")
    (data / "answers.sqlite").write_bytes(b"log")
    (data / "logs").mkdir()
    cache = tmp_path / "cache"
    snapshot.save(data, "k1", {"documents": 2, "chunks": 2, "ingest_s": 1.5}, cache=cache)
    writer.close()
    assert sorted(p.name for p in (cache / "k1").iterdir()) == ["index-model.sqlite", "snapshot.json"]
    fresh = tmp_path / "fresh"
    assert snapshot.restore(fresh, "k1", cache=cache) == {"documents": 2, "chunks": 2, "ingest_s": 1.5}
    with sqlite3.connect(fresh / "index-model.sqlite") as conn:
        assert sorted(r[0] for r in conn.execute("SELECT id FROM chunks")) == ["a", "b"]
    assert snapshot.restore(tmp_path / "other", "missing", cache=cache) is None


def test_an_interrupted_save_is_a_miss(tmp_path):
    cache = tmp_path / "cache"
    (cache / ".k2.partial").mkdir(parents=True)  # what a save killed half-way leaves
    assert snapshot.restore(tmp_path / "data", "k2", cache=cache) is None


def test_only_the_newest_snapshots_are_kept(tmp_path):
    cache = tmp_path / "cache"
    for age, name in enumerate(["newest", "newer", "older", "oldest"]):
        (cache / name).mkdir(parents=True)
        os.utime(cache / name, (1_000_000 - age, 1_000_000 - age))
    (cache / ".saving.partial").mkdir()  # another run's save under way
    snapshot.prune(cache, keep=2)
    assert sorted(p.name for p in cache.iterdir()) == [".saving.partial", "newer", "newest"]
