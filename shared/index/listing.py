"""What a tenant has stored, one row per document version (source sync compares it with its source)."""

import dataclasses
import json

from shared.index.embedded import EmbeddedIndex


@dataclasses.dataclass
class StoredVersion:
    document_id: str
    version: str
    source_uri: str
    source_sha256: str
    chunks: int
    effective_from: str
    effective_to: str
    title: str
    access_scopes: list[str] = dataclasses.field(default_factory=list)


def list_documents(index, tenant_id: str) -> list[StoredVersion]:
    if isinstance(index, EmbeddedIndex):
        rows = index._conn().execute(
            "SELECT document_id, version, MAX(source_uri), MAX(source_sha256), COUNT(*), MAX(effective_from), "
            "MAX(effective_to), MAX(title), json_group_array(DISTINCT access_scopes) FROM chunks "
            "WHERE tenant_id=? GROUP BY document_id, version ORDER BY document_id, version",
            (tenant_id,),
        )
        listed = []
        for *fields, scope_lists in rows:
            version = StoredVersion(*fields)
            # Each distinct access_scopes column value (a JSON list), gathered into one JSON array.
            version.access_scopes = sorted({s for scopes in json.loads(scope_lists) for s in json.loads(scopes)})
            listed.append(version)
        return listed
    if index.name == "opensearch":
        return _opensearch_versions(index, tenant_id)
    raise NotImplementedError(f"listing for index backend {index.name!r}")


def _opensearch_versions(index, tenant_id: str) -> list[StoredVersion]:
    from shared.index.opensearch import OPEN_END

    found: dict[tuple[str, str], StoredVersion] = {}
    scopes: dict[tuple[str, str], set[str]] = {}
    after = None
    fields = ["chunk_id", "document_id", "version", "source_uri", "source_sha256", "effective_from"]
    fields += ["effective_to", "title", "access_scopes"]
    index.client.indices.refresh(index=index.index)
    while True:
        body = {"size": 5000, "query": {"term": {"tenant_id": tenant_id}}, "sort": [{"chunk_id": "asc"}]}
        body["_source"] = fields
        if after:
            body["search_after"] = after
        hits = index.client.search(index=index.index, body=body)["hits"]["hits"]
        for hit in hits:
            s = hit["_source"]
            key = (s["document_id"], s["version"])
            if key not in found:
                end = "" if s["effective_to"] == OPEN_END else s["effective_to"]
                found[key] = StoredVersion(
                    s["document_id"],
                    s["version"],
                    s["source_uri"],
                    s["source_sha256"],
                    0,
                    s["effective_from"],
                    end,
                    s["title"],
                )
            found[key].chunks += 1
            scopes.setdefault(key, set()).update(s["access_scopes"])
        if len(hits) < 5000:
            for key, version in found.items():
                version.access_scopes = sorted(scopes[key])
            return [found[k] for k in sorted(found)]
        after = hits[-1]["sort"]
