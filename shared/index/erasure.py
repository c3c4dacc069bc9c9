"""Erasure from an index backend, every generation of it (one per embedding model): lineage and probes
taken before deletion, the deletion, the engine-level purge, and the verification.

Embedded: the SQLite files of every generation next to the serving one; rows go with secure_delete on,
FTS5 segments are merged ('optimize') and the write-ahead log is checkpointed and truncated; then the
probes are searched through FTS5 and SQL and in the raw bytes of each file and its -wal/-shm.
OpenSearch: every `<prefix>-chunks*` index; documents are deleted by id, then
`_forcemerge?only_expunge_deletes=true` (with expunge_deletes_allowed 0, so no segment keeps a deleted
document for being under the default 10% threshold) and the probes searched as phrases and ids.
"""

import dataclasses
import glob
import mmap
import os
import re
import time

from shared import config
from shared.erasure import StoreCheck, pick_probes, scan_files, sqlite_files
from shared.index.embedded import EmbeddedIndex

_WORD = re.compile(r"\w+", re.UNICODE)
_BATCH = 500
# Erased chunks' view vectors searched for in the raw bytes of each file (each search reads the whole file).
_VIEW_PROBES = 20


@dataclasses.dataclass
class IndexErasure:
    document_ids: list[str]
    chunk_ids: list[str]
    # Exact substrings of the erased text that no other stored chunk contains (held in memory only).
    probes: list[str]
    checks: list[StoreCheck]


def _phrase(probe: str) -> str:
    return " ".join(_WORD.findall(probe))


def erase(index, tenant_id: str, document_id: str | None) -> IndexErasure:
    if isinstance(index, EmbeddedIndex):
        return _erase_embedded(index, tenant_id, document_id)
    if index.name == "opensearch":
        return _erase_opensearch(index, tenant_id, document_id)
    raise NotImplementedError(f"erasure for index backend {index.name!r}")


# ---- embedded (SQLite) ------------------------------------------------------------------------


def embedded_generations(index: EmbeddedIndex) -> list[EmbeddedIndex]:
    """The serving file and every other generation's file beside it (index*.sqlite)."""
    folder = os.path.dirname(os.path.abspath(index.path))
    others = sorted(p for p in glob.glob(os.path.join(folder, "index*.sqlite")) if p != os.path.abspath(index.path))
    return [index] + [EmbeddedIndex(p) for p in others]


def _subject(tenant_id: str, document_id: str | None, alias: str = "") -> tuple[str, list]:
    if document_id is None:
        return f"{alias}tenant_id=?", [tenant_id]
    return f"{alias}tenant_id=? AND {alias}document_id=?", [tenant_id, document_id]


def _erase_embedded(index: EmbeddedIndex, tenant_id: str, document_id: str | None) -> IndexErasure:
    generations = embedded_generations(index)
    where, params = _subject(tenant_id, document_id)
    texts: dict[str, list[str]] = {}
    chunk_ids: list[str] = []
    before: dict[str, int] = {}
    view_blobs: list[bytes] = []
    for gen in generations:
        gen.warm_up()
        # The reranker's view vectors live in the chunk's row; their bytes are probes of the raw scan too.
        view_blobs += [
            bytes(blob)
            for (blob,) in gen._conn().execute(
                f"SELECT view_vectors FROM chunks WHERE {where} AND view_vectors IS NOT NULL", params
            )
        ]
        rows = gen._conn().execute(f"SELECT document_id, chunk_id, title, body FROM chunks WHERE {where}", params)
        count = 0
        for doc, chunk_id, title, body in rows:
            texts.setdefault(doc, [])
            texts[doc] += [title, body]
            chunk_ids.append(chunk_id)
            count += 1
        before[gen.path] = count

    aliased, _ = _subject(tenant_id, document_id, "c.")

    def exclusive(probe: str) -> bool:
        phrase = '"' + _phrase(probe) + '"'
        for gen in generations:
            others = (
                gen._conn()
                .execute(
                    "SELECT COUNT(*) FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid "
                    f"WHERE chunks_fts MATCH ? AND NOT ({aliased})",
                    [phrase, *params],
                )
                .fetchone()[0]
            )
            if others:
                return False
        return True

    probes = pick_probes({doc: "\n".join(parts) for doc, parts in texts.items()}, exclusive)
    view_probes = _exclusive_view_probes(generations, view_blobs, where, params)
    checks = []
    for gen in generations:
        removed = gen.erase(tenant_id, document_id)
        gen.purge()
        check = StoreCheck(
            store="index:embedded",
            location=gen.path,
            method="DELETE with secure_delete=ON (the row holds the text, vector and view vectors); FTS5 "
            "optimize; wal_checkpoint(TRUNCATE); verified by SQL, FTS5 phrase queries and a raw byte scan of "
            "the file, -wal and -shm for the text, the chunk ids and the view vectors' bytes",
            removed=removed,
            before=before[gen.path],
        )
        _verify_embedded(gen, tenant_id, document_id, probes, chunk_ids, check)
        _verify_view_bytes(gen, view_probes, check)
        checks.append(check)
    return IndexErasure(sorted(texts), sorted(set(chunk_ids)), probes, checks)


def _verify_embedded(
    gen: EmbeddedIndex, tenant_id: str, document_id: str | None, probes: list[str], ids: list[str], check: StoreCheck
) -> None:
    conn = gen._conn()
    where, params = _subject(tenant_id, document_id)
    check.after = conn.execute(f"SELECT COUNT(*) FROM chunks WHERE {where}", params).fetchone()[0]
    found_ids = 0
    for start in range(0, len(ids), _BATCH):
        part = ids[start : start + _BATCH]
        found_ids += conn.execute(
            f"SELECT COUNT(*) FROM chunks WHERE chunk_id IN ({','.join('?' * len(part))})", part
        ).fetchone()[0]
    found_probes = sum(
        1
        for p in probes
        if conn.execute(
            "SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", ['"' + _phrase(p) + '"']
        ).fetchone()
    )
    check.probes_checked, check.ids_checked = len(probes), len(ids)
    check.probes_found, check.ids_found = found_probes, found_ids
    check.add_scan(scan_files(sqlite_files(gen.path), probes, ids))


def _exclusive_view_probes(
    generations: list[EmbeddedIndex], blobs: list[bytes], where: str, params: list
) -> list[bytes]:
    """Up to _VIEW_PROBES of the erased chunks' view vectors that no other stored chunk holds (the same text
    under the same heading in another document or tenant has the same views, which an erasure must leave)."""
    candidates = list(dict.fromkeys(blobs))[: 4 * _VIEW_PROBES]
    if not candidates:
        return []
    shared: set[bytes] = set()
    for gen in generations:
        marks = ",".join("?" * len(candidates))
        shared |= {
            bytes(blob)
            for (blob,) in gen._conn().execute(
                f"SELECT view_vectors FROM chunks WHERE view_vectors IN ({marks}) AND NOT ({where})",
                [*candidates, *params],
            )
        }
    return [blob for blob in candidates if blob not in shared][:_VIEW_PROBES]


def _verify_view_bytes(gen: EmbeddedIndex, blobs: list[bytes], check: StoreCheck) -> None:
    """Erased chunks' view vectors found anywhere in the raw bytes count as rows the store still holds."""
    found: set[int] = set()
    for path in sqlite_files(gen.path):
        if os.path.getsize(path) == 0:
            continue
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found |= {i for i, blob in enumerate(blobs) if i not in found and data.find(blob) >= 0}
    note = f"view vectors: {len(blobs)} erased chunks' bytes (held by no other chunk) scanned, {len(found)} found"
    check.note = f"{check.note}; {note}" if check.note else note
    check.after += len(found)


# ---- OpenSearch --------------------------------------------------------------------------------


def opensearch_generations(index) -> list[str]:
    """Every index of this mesh's prefix (one per embedding model), or just this one."""
    base, sep, _ = index.index.rpartition("-chunks")
    if not sep:
        return [index.index]
    found = index.client.indices.get(index=f"{base}-chunks*", expand_wildcards="open")
    return sorted(found) or [index.index]


def _os_subject(tenant_id: str, document_id: str | None) -> dict:
    clauses = [{"term": {"tenant_id": tenant_id}}]
    if document_id is not None:
        clauses.append({"term": {"document_id": document_id}})
    return {"bool": {"filter": clauses}}


def _os_scan(client, name: str, query: dict, fields: list[str]) -> list[dict]:
    sources, after = [], None
    while True:
        body = {"size": 5000, "query": query, "sort": [{"chunk_id": "asc"}], "_source": fields}
        if after:
            body["search_after"] = after
        hits = client.search(index=name, body=body)["hits"]["hits"]
        sources += [h["_source"] for h in hits]
        if len(hits) < 5000:
            return sources
        after = hits[-1]["sort"]


def _erase_opensearch(index, tenant_id: str, document_id: str | None) -> IndexErasure:
    from opensearchpy import helpers

    client = index.client
    names = opensearch_generations(index)
    subject = _os_subject(tenant_id, document_id)
    texts: dict[str, list[str]] = {}
    ids_by_index: dict[str, list[str]] = {}
    for name in names:
        client.indices.refresh(index=name)
        rows = _os_scan(client, name, subject, ["chunk_id", "document_id", "title", "payload.body"])
        ids_by_index[name] = [r["chunk_id"] for r in rows]
        for r in rows:
            texts.setdefault(r["document_id"], [])
            texts[r["document_id"]] += [r.get("title", ""), r.get("payload", {}).get("body", "")]
    chunk_ids = sorted({cid for ids in ids_by_index.values() for cid in ids})

    def exclusive(probe: str) -> bool:
        query = {"bool": {"must": [{"match_phrase": {"search_text": _phrase(probe)}}], "must_not": [subject]}}
        return all(client.count(index=name, body={"query": query})["count"] == 0 for name in names)

    probes = pick_probes({doc: "\n".join(parts) for doc, parts in texts.items()}, exclusive)
    for name in names:
        ids = ids_by_index[name]
        for start in range(0, len(ids), _BATCH):
            actions = [{"_op_type": "delete", "_index": name, "_id": cid} for cid in ids[start : start + _BATCH]]
            helpers.bulk(client, actions, refresh=True, raise_on_error=False)
    # Every generation's merge waits out the same retention lease: waited for together, not one after another.
    expunged = _expunge(client, [name for name in names if ids_by_index[name]])
    checks = []
    for name in names:
        ids = ids_by_index[name]
        deleted_left, waited = expunged[name] if name in expunged else (_deleted_docs(client, name), 0.0)
        check = StoreCheck(
            store="index:opensearch",
            location=f"{index.url}/{name}",
            method="delete by id; flush; _forcemerge?only_expunge_deletes=true (expunge_deletes_allowed=0) "
            "repeated until the retention lease releases the soft-deleted documents; verified by term queries "
            "on chunk_id and tenant/document, match_phrase on search_text, and the deleted-document count",
            removed=len(ids),
            before=len(ids),
        )
        check.after = client.count(index=name, body={"query": subject})["count"]
        check.ids_checked, check.probes_checked = len(chunk_ids), len(probes)
        for start in range(0, len(chunk_ids), _BATCH):
            part = chunk_ids[start : start + _BATCH]
            check.ids_found += client.count(index=name, body={"query": {"terms": {"chunk_id": part}}})["count"]
        check.probes_found = sum(
            1
            for p in probes
            if client.count(index=name, body={"query": {"match_phrase": {"search_text": _phrase(p)}}})["count"]
        )
        check.note = f"deleted documents left in segments: {deleted_left} (merged for {waited:.0f}s)"
        if deleted_left:
            check.after += deleted_left  # a deleted document still in a segment still holds its text
        checks.append(check)
    return IndexErasure(sorted(texts), chunk_ids, probes, checks)


def _deleted_docs(client, name: str) -> int:
    stats = client.indices.stats(index=name, metric="docs")
    return int(stats["indices"][name]["primaries"]["docs"]["deleted"])


def _expunge(client, names: list[str]) -> dict[str, tuple[int, float]]:
    """Merges deleted documents out of the segments of each index. OpenSearch keeps soft-deleted documents
    (operation history for replicas and recovery) until the shard's retention lease advances past them, which its
    background sync does every ~30 s (not a setting it accepts); until then no merge may drop them. So: flush, then
    merge with only_expunge_deletes (and expunge_deletes_allowed 0, else segments under 10% deleted are skipped)
    until no deleted document is left, the indexes side by side. Returns, per index, (deleted documents left,
    seconds it took)."""
    started, timeout = time.monotonic(), config.mesh().erase_expunge_timeout
    for name in names:
        client.indices.put_settings(index=name, body={"index": {"merge.policy.expunge_deletes_allowed": 0}})
        client.indices.flush(index=name)
    done: dict[str, tuple[int, float]] = {}
    while len(done) < len(names):
        for name in [n for n in names if n not in done]:
            client.indices.forcemerge(index=name, only_expunge_deletes=True)
            left = _deleted_docs(client, name)
            waited = time.monotonic() - started
            if left == 0 or waited > timeout:
                client.indices.refresh(index=name)
                done[name] = (left, waited)
        if len(done) < len(names):
            time.sleep(2.0)
    return done
