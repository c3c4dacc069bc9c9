"""Closing a document's versions because another document replaces it, or because a newer version of the
same document follows them, on either backend."""

from shared.index.embedded import EmbeddedIndex
from shared.model import normalize_time


def close_document(index, tenant_id: str, document_id: str, effective_to: str) -> int:
    """Ends the versions in force at `effective_to` there; returns the chunks updated."""
    if isinstance(index, EmbeddedIndex):
        return index.close_document(tenant_id, document_id, effective_to)
    if index.name == "opensearch":
        return _close_opensearch(index, tenant_id, document_id, normalize_time(effective_to, "effective_to"))
    raise NotImplementedError(f"supersession for index backend {index.name!r}")


def _close_opensearch(index, tenant_id: str, document_id: str, end: str) -> int:
    in_force_then = (
        {"range": {"effective_from": {"lt": end}}},
        {"range": {"effective_to": {"gt": end}}},  # open versions carry the far-future end
    )
    index.client.indices.refresh(index=index.index)
    return _end_opensearch_chunks(index, _document_query(tenant_id, document_id, *in_force_then), end)


def _end_opensearch_chunks(index, query: dict, end: str) -> int:
    """Sets `effective_to` of every chunk the query matches; returns how many."""
    from opensearchpy import helpers

    hits = helpers.scan(index.client, index=index.index, query={"query": query, "_source": ["chunk_id"]})
    actions = [
        {"_op_type": "update", "_index": index.index, "_id": h["_id"], "doc": {"effective_to": end}} for h in hits
    ]
    if actions:
        helpers.bulk(index.client, actions, refresh=True)
    return len(actions)


def settle_versions(index, tenant_id: str, document_id: str, written_version: str) -> int:
    """A document's versions follow one another: after `written_version` is written, each version whose validity
    runs past the start of the next one is ended where that one begins (ordered by effective_from; on the same
    start, the version just written comes last, so re-issuing an undated document makes the new text current).
    Versions that already end by then are left as stated. Returns the chunks updated."""
    order = sorted(_versions(index, tenant_id, document_id), key=lambda v: (v[1], v[0] == written_version))
    updated = 0
    for (version, _, end), (_, next_start, _) in zip(order, order[1:], strict=False):
        if not end or end > next_start:
            updated += _end_version(index, tenant_id, document_id, version, next_start)
    return updated


def _versions(index, tenant_id: str, document_id: str) -> list[tuple[str, str, str]]:
    """(version, effective_from, effective_to or "" when open) of each stored version of the document."""
    if isinstance(index, EmbeddedIndex):
        return index.document_versions(tenant_id, document_id)
    if index.name == "opensearch":
        return _opensearch_versions(index, tenant_id, document_id)
    raise NotImplementedError(f"version succession for index backend {index.name!r}")


def _end_version(index, tenant_id: str, document_id: str, version: str, end: str) -> int:
    if isinstance(index, EmbeddedIndex):
        return index.end_version(tenant_id, document_id, version, end)
    return _end_opensearch_version(index, tenant_id, document_id, version, end)


def _document_query(tenant_id: str, document_id: str, *more: dict) -> dict:
    return {"bool": {"filter": [{"term": {"tenant_id": tenant_id}}, {"term": {"document_id": document_id}}, *more]}}


def _opensearch_versions(index, tenant_id: str, document_id: str) -> list[tuple[str, str, str]]:
    from opensearchpy import helpers

    from shared.index.opensearch import OPEN_END

    index.client.indices.refresh(index=index.index)
    fields = ["version", "effective_from", "effective_to"]
    query = {"query": _document_query(tenant_id, document_id), "_source": fields}
    found: dict[str, tuple[str, str, str]] = {}
    for hit in helpers.scan(index.client, index=index.index, query=query):
        s = hit["_source"]
        found.setdefault(
            s["version"],
            (s["version"], s["effective_from"], "" if s["effective_to"] == OPEN_END else s["effective_to"]),
        )
    return list(found.values())


def _end_opensearch_version(index, tenant_id: str, document_id: str, version: str, end: str) -> int:
    return _end_opensearch_chunks(index, _document_query(tenant_id, document_id, {"term": {"version": version}}), end)
