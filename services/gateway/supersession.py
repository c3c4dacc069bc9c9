"""Acting on what an ingested document states about the documents it replaces (front matter `supersedes`,
or a "replaces ..." sentence read from its text by the chunker): the one stored document it means is closed
at the new document's effective date, so only the current one is retrieved; a statement that matches no
document or several is reported and left alone. Every statement comes back in the ingest result with its
outcome, for the operator to confirm or to override with front matter."""

from services.chunker.supersession import SOURCE_FRONT_MATTER, match_replaced
from services.gateway.auth import caller_guard, unheld_scopes
from shared.clients import StageCallError, StageClient
from shared.model import utc_now
from shared.stubs import common_pb2, indexer_pb2

_DEFAULT_EFFECTIVE_FROM = "1970-01-01"
_OVERRIDE = "state `supersedes: <document id>` (or `supersedes: none`) in its front matter"


def link(
    indexer: StageClient, meta: common_pb2.DocumentMeta, statements, context
) -> list[common_pb2.GovernanceStatement]:
    done = []
    stored = None
    for statement in statements:
        out = common_pb2.GovernanceStatement()
        out.CopyFrom(statement)
        if out.field == "effective_from":
            out.outcome = f"applied: in force from {meta.effective_from}"
        elif out.field == "supersedes":
            try:
                if stored is None:
                    stored = _stored(indexer, meta, context)
                out.outcome = _supersede(indexer, meta, out, *stored, context)
            except StageCallError as err:
                out.outcome = f"not linked: the stored documents could not be listed ({err.code.name})"
        done.append(out)
    return done


def _stored(indexer: StageClient, meta, context) -> tuple[list[dict], list]:
    """The other documents in force that the caller may supersede, and this document's earlier versions
    (already ended where this one begins: the indexer settles a document's versions when it writes one).
    A document in a scope the key does not hold is no candidate: an outcome must not name it."""
    listed = [
        v
        for v in indexer.call(
            "ListDocuments", indexer_pb2.IndexerListDocumentsRequest(tenant_id=meta.tenant_id), context
        ).documents
        if not unheld_scopes(v.access_scopes)
    ]
    earlier = [v for v in listed if v.document_id == meta.document_id and v.version != meta.version and v.effective_to]
    found: dict[str, dict] = {}
    for v in listed:
        if v.document_id != meta.document_id and not v.effective_to:
            found.setdefault(
                v.document_id,
                {
                    "document_id": v.document_id,
                    "title": v.title,
                    "source_uri": v.source_uri,
                    "effective_from": v.effective_from,
                },
            )
    return list(found.values()), earlier


def _supersede(indexer: StageClient, meta, statement, stored: list[dict], earlier: list, context) -> str:
    if statement.source == SOURCE_FRONT_MATTER:
        targets = [d for d in stored if d["document_id"] == statement.value]
    else:
        targets = match_replaced(statement.value, meta.title, stored)
    if not targets and earlier and statement.source != SOURCE_FRONT_MATTER:
        # "This policy replaces the 2025 policy", said by the 2026 version of the same document.
        ended = ", ".join(
            f"{v.version} (in force until {v.effective_to})" for v in sorted(earlier, key=lambda v: v.version)
        )
        return f"applied: it follows the earlier version(s) of this document: {ended}"
    if not targets:
        return f"not linked: no current stored document matches; {_OVERRIDE}"
    if len(targets) > 1:
        names = ", ".join(sorted(t["document_id"] for t in targets))
        return f"not linked: it could mean {names}; {_OVERRIDE}"
    target = targets[0]["document_id"]
    dated = not meta.effective_from.startswith(_DEFAULT_EFFECTIVE_FROM)
    end = meta.effective_from if dated else utc_now()
    reply = indexer.call(
        "Supersede",
        indexer_pb2.SupersedeRequest(
            tenant_id=meta.tenant_id, document_id=target, effective_to=end, guard=caller_guard()
        ),
        context,
    )
    when = end if dated else f"{end} (now: the document states no effective date)"
    return f"linked: {target} superseded, in force until {when} ({reply.chunks_updated} chunks)"
