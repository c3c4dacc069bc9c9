"""A cached copy of an ingested embedded index, so a load run ingests its corpus once, not every run.

The snapshot is keyed by everything that decides what an ingest writes: the documents (ids and content), the
code of the ingest path (chunker, indexer, the embedded index, embedders, text helpers, protos), the mesh's
settings (RAGMESH_* variables other than ports, hosts and the data dir) and the ingest stages' settings as
resolved with their defaults. Any change to one of them is another key, so a stale index is never served.
Snapshots hold the embedded index only, so OpenSearch's client code and settings are not part of the key: a
change to how OpenSearch is queried does not cost a re-ingest of the embedded corpus. Stores in the data dir
that are not the index (API keys, the answer log, logs) are neither saved nor restored. SQLite files are copied
with SQLite's backup API, which reads a consistent state while the stages keep the file open.
"""

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.path.expanduser("~/.cache/ragmesh/loadtest-index"))
# What an ingest's result depends on, besides the documents and the settings.
INGEST_CODE = (
    "services/chunker",
    "services/indexer",
    "shared/index",
    "shared/embedding",
    "shared/text.py",
    "shared/convert.py",
    "shared/model.py",
    "protos/ragmesh/v1",
)
# The stages whose resolved settings (defaults included) decide what an ingest writes.
INGEST_STAGES = ("chunker", "indexer", "retriever")
_PER_RUN_FIELDS = {"host", "port", "metrics_port", "health_port", "data_dir"}
# Data-dir entries that are not the index: the key store, the answer log, logs and local keys.
NOT_INDEX = ("keys.sqlite", "answers.sqlite", "logs", "api-keys")
_PER_RUN_SUFFIXES = ("_PORT", "_ADDR", "_HOST", "_METRICS_PORT")
# Settings that only schedule requests (how many run at once) and never change what an ingest writes.
_SCHEDULING_SUFFIXES = ("_MAX_WORKERS", "_MAX_IN_FLIGHT")
_SCHEDULING_FIELDS = {"max_workers"}
# What only the OpenSearch backend reads: a snapshot is of the embedded index.
OPENSEARCH_CODE = ("shared/index/opensearch.py",)
_OPENSEARCH_FIELD = "opensearch_"
_OPENSEARCH_VARIABLE = "RAGMESH_OPENSEARCH_"  # OPENSEARCH_URL is not a RAGMESH_ variable: never in the key
# Snapshots kept: one per corpus and scenario in use and some of older code or settings. A sweep over a few
# settings must not push out the SciFact corpus's snapshot (81 min to ingest here), as six once did.
KEEP = 12


def _code_digest(root: Path = ROOT) -> str:
    digest = hashlib.sha256()
    for part in INGEST_CODE:
        path = root / part
        files = sorted(path.rglob("*.py")) + sorted(path.rglob("*.proto")) if path.is_dir() else [path]
        for file in files:
            name = str(file.relative_to(root))
            if file.is_file() and name not in OPENSEARCH_CODE:
                digest.update(name.encode())
                digest.update(file.read_bytes())
    return digest.hexdigest()


def settings_that_matter(env: dict[str, str]) -> dict[str, str]:
    """The mesh's RAGMESH_* settings without what differs run to run (ports, addresses, the data dir), without
    what only schedules requests (worker threads, the gateway's in-flight limit) and without OpenSearch's."""
    return {
        k: v
        for k, v in sorted(env.items())
        if k.startswith("RAGMESH_")
        and k != "RAGMESH_DATA_DIR"
        and not k.endswith(_PER_RUN_SUFFIXES + _SCHEDULING_SUFFIXES)
        and not k.startswith(_OPENSEARCH_VARIABLE)
    }


def resolved_settings(env: dict[str, str]) -> dict[str, dict]:
    """The ingest stages' settings as they will run (defaults from shared/config.py included), per stage: an edit
    of config.py that changes no ingest setting keeps the cache."""
    from shared import config

    classes = {"chunker": config.ChunkerConfig, "indexer": config.IndexerConfig, "retriever": config.RetrieverConfig}
    out = {}
    for stage in INGEST_STAGES:
        values = config.load(classes[stage], stage, env).model_dump(mode="json")
        out[stage] = {
            k: v
            for k, v in sorted(values.items())
            if k not in _PER_RUN_FIELDS | _SCHEDULING_FIELDS and not k.startswith(_OPENSEARCH_FIELD)
        }
    return out


def key(documents: Iterable, tenant: str, env: dict[str, str]) -> str:
    """The cache key of ingesting `documents` (SourceDocument messages) into `tenant` with this code and `env`."""
    digest = hashlib.sha256()
    digest.update(tenant.encode())
    for document in documents:
        digest.update(document.SerializeToString(deterministic=True))
    digest.update(json.dumps(settings_that_matter(env)).encode())
    digest.update(json.dumps(resolved_settings(env), sort_keys=True).encode())
    digest.update(_code_digest().encode())
    return digest.hexdigest()[:24]


def _index_entries(data_dir: Path) -> list[Path]:
    out = []
    for entry in sorted(data_dir.iterdir()):
        name = entry.name
        if any(name == n or name.startswith(n + "-") for n in NOT_INDEX):
            continue
        if name.endswith(("-wal", "-shm", "-journal")):
            continue  # the backup of the main file carries what the WAL holds
        out.append(entry)
    return out


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target)
    elif source.suffix == ".sqlite":
        with contextlib.closing(sqlite3.connect(source)) as src, contextlib.closing(sqlite3.connect(target)) as dst:
            src.backup(dst)
    else:
        shutil.copy2(source, target)


def save(data_dir: str | Path, cache_key: str, meta: dict, cache: Path = CACHE) -> Path:
    """The index files of `data_dir` (and `meta`: counts and the ingest time it saves) under the key."""
    folder = cache / cache_key
    partial = cache / f".{cache_key}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    for entry in _index_entries(Path(data_dir)):
        _copy(entry, partial / entry.name)
    (partial / "snapshot.json").write_text(json.dumps(meta, indent=1))
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)  # complete or absent: a run killed while saving leaves no half snapshot
    prune(cache)
    return folder


def prune(cache: Path = CACHE, keep: int = KEEP) -> None:
    """Only the `keep` newest snapshots stay: each change of the ingest code or settings makes a new key."""
    finished = [p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")]  # not a save under way
    snapshots = sorted(finished, key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in snapshots[keep:]:
        shutil.rmtree(stale, ignore_errors=True)


def restore(data_dir: str | Path, cache_key: str, cache: Path = CACHE) -> dict | None:
    """Copy the snapshot into `data_dir` (before the mesh starts) and return its meta; None on a miss."""
    folder = cache / cache_key
    meta_file = folder / "snapshot.json"
    if not meta_file.exists():
        return None
    Path(data_dir).mkdir(parents=True, exist_ok=True)
    for entry in sorted(folder.iterdir()):
        if entry.name != "snapshot.json":
            _copy(entry, Path(data_dir) / entry.name)
    return json.loads(meta_file.read_text())
