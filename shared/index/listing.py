"""What a tenant has stored, one row per document version (source sync compares it with its source), a page at a
time in (document_id, version) order. A page is found by its key (the last version of the previous page), not
by an offset, so each page costs the same however deep it is, and no version is listed twice or skipped
because others were written or deleted meanwhile (one written behind the page being read shows up in the
next listing)."""

import dataclasses
import itertools
import json

from shared.index.embedded import EmbeddedIndex
from shared.paging import after_key, cut, page_size


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


def list_page(index, tenant_id: str, token: str = "", size: int = 0) -> tuple[list[StoredVersion], str]:
    """One page of the tenant's versions after `token`, and the token of the next page ("" after the last)."""
    limit = page_size(size)
    after = after_key(token, (str, str), "ListDocuments")
    if isinstance(index, EmbeddedIndex):
        versions = _embedded_versions(index, tenant_id, after, limit + 1)
    elif index.name == "opensearch":
        versions = _opensearch_versions(index, tenant_id, after, limit + 1)
    else:
        raise NotImplementedError(f"listing for index backend {index.name!r}")
    page, following = cut(versions, limit, lambda v: (v.document_id, v.version))
    return list(page), following


def _embedded_versions(index, tenant_id: str, after: tuple | None, limit: int) -> list[StoredVersion]:
    # The (tenant_id, document_id, version) index serves both the range and the grouping order.
    where, params = "tenant_id=?", [tenant_id]
    if after:
        where += " AND (document_id, version) > (?, ?)"  # a row value: SQLite seeks the index to it
        params += [after[0], after[1]]
    rows = index._conn().execute(
        "SELECT document_id, version, MAX(source_uri), MAX(source_sha256), COUNT(*), MAX(effective_from), "
        "MAX(effective_to), MAX(title), json_group_array(DISTINCT access_scopes) FROM chunks "
        f"WHERE {where} GROUP BY document_id, version ORDER BY document_id, version LIMIT ?",
        (*params, limit),
    )
    listed = []
    for *fields, scope_lists in rows:
        version = StoredVersion(*fields)
        # Each distinct access_scopes column value (a JSON list), gathered into one JSON array.
        version.access_scopes = sorted({s for scopes in json.loads(scope_lists) for s in json.loads(scopes)})
        listed.append(version)
    return listed


def _opensearch_versions(index, tenant_id: str, after: tuple | None, limit: int) -> list[StoredVersion]:
    filters: list[dict] = [{"term": {"tenant_id": tenant_id}}]
    if after:
        later_version = {
            "bool": {"filter": [{"term": {"document_id": after[0]}}, {"range": {"version": {"gt": after[1]}}}]}
        }
        filters.append(
            {
                "bool": {
                    "should": [{"range": {"document_id": {"gt": after[0]}}}, later_version],
                    "minimum_should_match": 1,
                }
            }
        )
    index.client.indices.refresh(index=index.index)
    groups = index.version_groups({"bool": {"filter": filters}}, _OPENSEARCH_FIELDS)
    return [_opensearch_version(hits) for hits in itertools.islice(groups, limit)]


_OPENSEARCH_FIELDS = [
    "document_id",
    "version",
    "source_uri",
    "source_sha256",
    "effective_from",
    "effective_to",
    "title",
    "access_scopes",
]


def _opensearch_version(hits: list[dict]) -> StoredVersion:
    """One version's chunk hits as its listing row."""
    from shared.index.opensearch import OPEN_END

    s = hits[0]["_source"]
    return StoredVersion(
        s["document_id"],
        s["version"],
        s["source_uri"],
        s["source_sha256"],
        len(hits),
        s["effective_from"],
        "" if s["effective_to"] == OPEN_END else s["effective_to"],
        s["title"],
        sorted({scope for hit in hits for scope in hit["_source"]["access_scopes"]}),
    )
