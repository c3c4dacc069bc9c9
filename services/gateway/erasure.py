"""Erasure with proof, orchestrated by the gateway: the indexer erases the index (every generation) and
returns the lineage (document and chunk ids) and probes taken from the text before deletion; the
gateway then erases its answer log, feedback and exported cases, and asks the retriever and reranker to
drop what they hold in memory for those chunks. Every store reports its own verification; the erasure
is verified only when every store is clean. The report (JSON + Markdown, no erased text) is stored in
the data dir's erasure-reports/ folder and returned."""

import dataclasses
import json
import logging
import os
import re
import uuid
from datetime import UTC, datetime

from services.gateway.answer_log import AnswerLog
from services.gateway.auth import caller_guard
from shared.clients import StageCallError, StageClient
from shared.erasure import StoreCheck, ids_digest, probe_digest
from shared.errors import InvalidArgument
from shared.names import check_tenant_id
from shared.privacy import PRIVACY_DIR, erase_tenant
from shared.stubs import gateway_pb2, indexer_pb2, reranker_pb2, retriever_pb2

log = logging.getLogger("ragmesh.gateway.erasure")
REPORTS_DIR = "erasure-reports"
_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_FORGET_BATCH = 5000
NOT_REACHED = (
    "trace backends (OTLP): spans are exported as they end and cannot be recalled; they carry chunk ids and, "
    "unless RAGMESH_REDACT_QUERIES is on, the question and the answer text",
    "copies outside the data folder: backups, exports written to stdout, files copied elsewhere",
    "stage logs (`logs/<stage>.log` and rotated copies under `ragmesh up`, or the platform's log collector): "
    "operational lines, kept until rotated away; the HTTP door's access lines name chunk and document ids in "
    "their URLs, and at DEBUG level (without strict privacy) stages may log questions",
    "free blocks of the file system and storage device beneath the files (a rewrite does not shred them)",
)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class Eraser:
    def __init__(
        self,
        indexer: StageClient,
        retriever: StageClient,
        reranker: StageClient,
        answer_log: AnswerLog | None,
        reports_dir: str,
        extra_stores=(),
    ):
        self.indexer, self.retriever, self.reranker = indexer, retriever, reranker
        self.answer_log = answer_log
        self.reports_dir = reports_dir
        # Other per-tenant stores (callables (tenant_id, document_ids, whole) -> StoreCheck): the privacy
        # mode's pseudonym map.
        self.extra_stores = list(extra_stores)

    def erase(self, request: gateway_pb2.EraseRequest, context) -> gateway_pb2.EraseResponse:
        check_tenant_id(request.tenant_id)
        if request.whole_tenant == bool(request.document_id):
            raise InvalidArgument("document_id", "name one document, or set whole_tenant (not both)")
        request_id = request.request_id or uuid.uuid4().hex
        if not _REQUEST_ID.fullmatch(request_id):
            raise InvalidArgument("request_id", "1-64 characters of letters, digits, '.', '_' or '-'")
        started = _now()
        tenant = request.tenant_id
        asked = None if request.whole_tenant else [request.document_id]
        # The answer log's own lineage first: chunks of versions the index no longer holds are in it too.
        logged_ids = self.answer_log.lineage_chunk_ids(tenant, asked) if self.answer_log else set()
        index = self.indexer.call(
            "Erase",
            indexer_pb2.IndexerEraseRequest(
                tenant_id=tenant,
                document_id=request.document_id,
                whole_tenant=request.whole_tenant,
                guard=caller_guard(),
            ),
            context,
        )
        documents = sorted(set(index.document_ids) | set(asked or []))
        chunk_ids = set(index.chunk_ids) | logged_ids
        probes = list(index.probes)
        stores = [_check_from_pb(s) for s in index.stores]
        if self.answer_log is not None:
            stores += self.answer_log.erase(tenant, asked, chunk_ids, probes)
        # Every replica of the retriever and the reranker holds its own memory: each reports as a store.
        stores += self._forget_retriever(tenant, context)
        stores += self._forget_reranker(sorted(chunk_ids), context)
        for store in self.extra_stores:
            stores.append(store(tenant, asked, request.whole_tenant))
        response = gateway_pb2.EraseResponse(
            request_id=request_id,
            verified=all(s.clean for s in stores),
            stores=[indexer_pb2.StoreCheck(**dataclasses.asdict(s)) for s in stores],
            started_at=started,
            finished_at=_now(),
            document_ids=documents,
            chunk_id_count=len(chunk_ids),
            chunk_ids_sha256=ids_digest(sorted(chunk_ids)),
            probe_count=len(probes),
            probe_digests=[probe_digest(p) for p in probes],
        )
        report = report_dict(response, stores, tenant, request.whole_tenant)
        response.report_path = self._store(request_id, report)
        response.report_json = json.dumps(report, indent=2)
        log.info(
            "erasure %s of %s %s: %s (%d chunk ids, %d probes, %d stores)",
            request_id,
            "tenant" if request.whole_tenant else "a document of tenant",
            tenant,
            "verified" if response.verified else "NOT VERIFIED",
            len(chunk_ids),
            len(probes),
            len(stores),
        )
        return response

    def _forget_retriever(self, tenant_id: str, context) -> list[StoreCheck]:
        method = "the tenant's in-memory k-NN view dropped (rebuilt from the erased file on the next query)"
        try:
            replies = self.retriever.call_each("Forget", retriever_pb2.ForgetRequest(tenant_id=tenant_id), context)
        except StageCallError as err:  # its replicas could not be listed
            return [StoreCheck("retriever:memory", self.retriever.address, method, unchecked=True, note=err.message)]
        checks = []
        for one in replies:
            check = StoreCheck("retriever:memory", one.address, method)
            if one.error is not None:
                check.unchecked, check.note = True, f"retriever unreachable: {one.error.message}"
            else:
                check.removed = one.reply.views_dropped
                check.note = f"backend {one.reply.backend}; views dropped: {one.reply.views_dropped}"
            checks.append(check)
        return checks

    def _forget_reranker(self, chunk_ids: list[str], context) -> list[StoreCheck]:
        method = "per-chunk cache entries removed by chunk id; verified by looking each id up again"
        checks: dict[str, StoreCheck] = {}
        try:
            for start in range(0, max(len(chunk_ids), 1), _FORGET_BATCH):
                part = chunk_ids[start : start + _FORGET_BATCH]
                replies = self.reranker.call_each(
                    "ForgetChunks", reranker_pb2.ForgetChunksRequest(chunk_ids=part), context
                )
                for one in replies:
                    check = checks.setdefault(
                        one.address, StoreCheck("reranker:cache", one.address, method, ids_checked=len(chunk_ids))
                    )
                    if one.error is not None:
                        check.unchecked, check.note = True, f"reranker unreachable: {one.error.message}"
                        continue
                    check.removed += one.reply.removed
                    check.before += one.reply.removed + one.reply.remaining
                    check.after += one.reply.remaining
                    check.ids_found += one.reply.remaining
                if all(one.error is not None for one in replies):
                    break  # no replica answers: the rest of the ids would only wait on the same errors
        except StageCallError as err:  # its replicas could not be listed
            return [StoreCheck("reranker:cache", self.reranker.address, method, unchecked=True, note=err.message)]
        return list(checks.values())

    def _store(self, request_id: str, report: dict) -> str:
        os.makedirs(self.reports_dir, exist_ok=True)
        base = os.path.join(self.reports_dir, request_id)
        with open(base + ".json", "w", encoding="utf-8") as out:
            json.dump(report, out, indent=2)
        with open(base + ".md", "w", encoding="utf-8") as out:
            out.write(report_markdown(report))
        return base + ".json"


def pseudonym_map_store(data_dir: str):
    """The privacy mode's per-tenant pseudonym map (shared/privacy.py): its entries are names, not tied to a
    document, so a document's erasure leaves it (encrypted); a tenant's erasure overwrites and removes it."""

    def erase(tenant_id: str, document_ids: list[str] | None, whole_tenant: bool) -> StoreCheck:
        folder = os.path.join(data_dir, PRIVACY_DIR)
        check = StoreCheck(
            "privacy:pseudonym_map",
            os.path.join(folder, f"{tenant_id}.map"),
            "key and encrypted map overwritten with zeros, then removed (tenant erasure only)",
        )
        if whole_tenant:
            check.removed, left = erase_tenant(data_dir, tenant_id)
            check.before, check.after = check.removed, len(left)
        else:
            check.note = "entries are names, kept encrypted until the tenant is erased"
        return check

    return erase


def _check_from_pb(pb) -> StoreCheck:
    return StoreCheck(**{f.name: getattr(pb, f.name) for f in dataclasses.fields(StoreCheck)})


def report_dict(
    response: gateway_pb2.EraseResponse, stores: list[StoreCheck], tenant_id: str, whole_tenant: bool
) -> dict:
    """The erasure report: what was removed where, counts before and after, the probes' results."""
    return {
        "request_id": response.request_id,
        "subject": {
            "tenant_id": tenant_id,
            "scope": "tenant" if whole_tenant else "document",
            "document_ids": list(response.document_ids),
        },
        "started_at": response.started_at,
        "finished_at": response.finished_at,
        "verified": response.verified,
        "lineage": {"chunk_ids": response.chunk_id_count, "chunk_ids_sha256": response.chunk_ids_sha256},
        "probes": {
            "text_runs": response.probe_count,
            "kind": "runs of 5 words taken from the erased text before deletion, that no other stored "
            "document contains; searched through each store's queries and in its raw files",
            "sha256_prefixes": list(response.probe_digests),
            "chunk_ids": response.chunk_id_count,
        },
        "stores": [{**dataclasses.asdict(s), "clean": s.clean} for s in stores],
        "not_reached": list(NOT_REACHED),
    }


def found_nothing(report: dict) -> bool:
    """A document erasure that found no chunk and removed nothing of it anywhere (the retriever drops its
    whole in-memory view of the tenant either way, so its count says nothing of the document)."""
    return (
        report["subject"]["scope"] == "document"
        and report["lineage"]["chunk_ids"] == 0
        and not any(store["removed"] for store in report["stores"] if not store["store"].startswith("retriever:"))
    )


def report_markdown(report: dict) -> str:
    subject = report["subject"]
    what = (
        f"all data of tenant `{subject['tenant_id']}`"
        if subject["scope"] == "tenant"
        else f"document `{', '.join(subject['document_ids'])}` of tenant `{subject['tenant_id']}`"
    )
    lines = [
        f"# Erasure report {report['request_id']}",
        "",
        f"- Subject: {what}",
        f"- Requested {report['started_at']}, finished {report['finished_at']}",
        f"- Result: **{'VERIFIED: nothing survived' if report['verified'] else 'NOT VERIFIED: something survived'}**",
        f"- Lineage: {report['lineage']['chunk_ids']} chunk ids "
        f"(sha256 of the sorted list {report['lineage']['chunk_ids_sha256'][:16]}...)",
        f"- Probes: {report['probes']['text_runs']} text runs ({report['probes']['kind']}) and "
        f"{report['probes']['chunk_ids']} chunk ids",
    ]
    if found_nothing(report):
        lines.append(
            "- Nothing was stored under this document id for this tenant: already erased, or a mistyped id (the "
            "document meant is then still stored; `ragmesh documents` lists the ids)"
        )
    if report["probes"]["text_runs"] == 0 and report["probes"]["chunk_ids"]:
        lines.append(
            "- No text run could be taken (the erased text holds none that no other stored document holds): "
            "the stores were checked for the chunk ids and row counts, not for the text"
        )
    lines += [
        "",
        "| store | location | removed | before | after | probes found | ids found | clean | method |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in report["stores"]:
        lines.append(
            f"| {s['store']} | {s['location']} | {s['removed']} | {s['before']} | {s['after']} | "
            f"{s['probes_found']}/{s['probes_checked']} | {s['ids_found']}/{s['ids_checked']} | "
            f"{'yes' if s['clean'] else 'NO'} | {s['method']}{' (' + s['note'] + ')' if s['note'] else ''} |"
        )
    lines += ["", "Not reachable by this erasure:", ""] + [f"- {item}" for item in report["not_reached"]]
    return "\n".join(lines) + "\n"
