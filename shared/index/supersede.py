"""Closing a document's versions because another document replaces it, on either backend."""

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
    from opensearchpy import helpers

    query = {
        "bool": {
            "filter": [
                {"term": {"tenant_id": tenant_id}},
                {"term": {"document_id": document_id}},
                {"range": {"effective_from": {"lt": end}}},
                {"range": {"effective_to": {"gt": end}}},  # open versions carry the far-future end
            ]
        }
    }
    index.client.indices.refresh(index=index.index)
    hits = helpers.scan(index.client, index=index.index, query={"query": query, "_source": ["chunk_id"]})
    actions = [
        {"_op_type": "update", "_index": index.index, "_id": h["_id"], "doc": {"effective_to": end}} for h in hits
    ]
    if actions:
        helpers.bulk(index.client, actions, refresh=True)
    return len(actions)
