"""`ragmesh sync PATH --tenant T`: make a tenant's index match a folder. New and changed files are ingested,
files gone from the folder are erased through the verified erasure path (`ragmesh erase`), unchanged ones
cost one hash each. Files are matched to stored documents by source uri (the path under the folder) and
compared by the SHA-256 of their bytes, which the chunker stores with every version.

Guards against the known failure classes of sync jobs: a folder that cannot be read (missing, permission
denied, a file that fails to read) erases nothing; an empty folder does not erase the tenant unless
--allow-empty says so; when any ingest fails, nothing is erased in that run (a renamed file whose new copy
failed would otherwise vanish)."""

import dataclasses
import hashlib
import sys
import time
from pathlib import Path

from ragmesh.client import document
from ragmesh.client.ingest import ingest_per_document
from services.chunker.formats.text import decode
from services.chunker.frontmatter import split_front_matter
from services.chunker.governance import text_value
from services.cli.documents import collect_files, skipped_line
from services.cli.erase import EXIT_SURVIVED, erase
from services.cli.ingest import RunReport, send_documents
from shared.credentials import gateway_channel
from shared.errors import InvalidArgument
from shared.stubs import gateway_pb2, gateway_pb2_grpc

EXIT_USAGE = 2


class SourceUnreadable(Exception):
    pass


@dataclasses.dataclass
class SourceFile:
    path: Path
    uri: str
    content: bytes
    sha256: str


@dataclasses.dataclass
class Plan:
    add: list[SourceFile] = dataclasses.field(default_factory=list)
    change: list[SourceFile] = dataclasses.field(default_factory=list)
    # (document id, source uri) of stored documents whose file is gone.
    remove: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    # (old uri, new uri): a removed and an added file with the same bytes.
    renamed: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    unchanged: int = 0
    # (document id, version) -> source uri of the unchanged files: front matter can give two files one id, so a
    # removed file's document may still be another file's, and a sent file may give an unchanged file's version.
    unchanged_versions: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)

    # Document ids the files to send state in their front matter (path otherwise): what a dry run predicts.
    sent_ids: set[str] = dataclasses.field(default_factory=set)

    def kept_ids(self, written: set[str]) -> set[str]:
        """The documents another file of the folder still gives (`written` by this run, or unchanged): a removed
        file's document among them was renamed with its doc_id, and is kept."""
        return written | {doc for doc, _ in self.unchanged_versions}


def read_source(root: str, skipped: list[str] | None = None) -> list[SourceFile]:
    """Every file under the folder with its bytes (files of a type no parser reads go to `skipped`); any
    failure to read makes the whole source unreadable."""
    path = Path(root)
    if not path.is_dir():
        raise SourceUnreadable(f"{root}: not a readable folder")
    try:
        files = collect_files([root], skipped)
        read = []
        for file, uri in files:
            content = file.read_bytes()
            read.append(SourceFile(file, uri, content, hashlib.sha256(content).hexdigest()))
    except OSError as err:
        raise SourceUnreadable(f"{err.filename or root}: {err.strerror or err}") from err
    return read


def stated_document_id(file: SourceFile) -> str:
    """The document id the chunker will give the file: its front matter's doc_id, else its path. A file
    whose front matter cannot be read is refused at ingest; its path stands in here."""
    try:
        fields = split_front_matter(decode(file.content, file.uri, "text"), file.uri).fields
        return text_value(fields["doc_id"], "front_matter.doc_id", file.uri)
    except (KeyError, InvalidArgument):
        return file.uri


def _latest_first(version) -> tuple[str, str]:
    # The version in force last: the latest start, and of versions starting together the one still open (the
    # indexer ends each version where the next begins, so an undated re-issue leaves its predecessor ended).
    return (version.effective_from, version.effective_to or "9999")


def make_plan(source: list[SourceFile], stored: list) -> Plan:
    """Compares the folder with the stored document versions (gateway ListDocuments). A file is unchanged
    when its bytes are those of its latest stored version: a file reverted to an older version's bytes is a
    change, which makes that text current again."""
    by_uri: dict = {}  # source uri -> its latest stored version
    for version in sorted(stored, key=_latest_first, reverse=True):
        by_uri.setdefault(version.source_uri, version)
    plan = Plan()
    seen = set()
    for file in source:
        seen.add(file.uri)
        known = by_uri.get(file.uri)
        if known is None:
            plan.add.append(file)
        elif file.sha256 != known.source_sha256:
            plan.change.append(file)
        else:
            plan.unchanged += 1
            plan.unchanged_versions[(known.document_id, known.version)] = file.uri
    plan.remove = sorted((v.document_id, uri) for uri, v in by_uri.items() if uri not in seen)
    plan.sent_ids = {stated_document_id(f) for f in plan.add + plan.change}
    added_by_hash = {f.sha256: f.uri for f in plan.add}
    for _, uri in plan.remove:
        if by_uri[uri].source_sha256 in added_by_hash:
            plan.renamed.append((uri, added_by_hash[by_uri[uri].source_sha256]))
    return plan


def print_plan(plan: Plan, out) -> None:
    renamed_old = {old for old, _ in plan.renamed}
    renamed_new = {new for _, new in plan.renamed}
    for old, new in plan.renamed:
        print(f"rename {old} -> {new}", file=out)
    for file in plan.add:
        if file.uri not in renamed_new:
            print(f"add    {file.uri}", file=out)
    for file in plan.change:
        print(f"change {file.uri}", file=out)
    kept, kept_ids = 0, plan.kept_ids(plan.sent_ids)
    for doc, uri in plan.remove:
        if doc in kept_ids:
            kept += 1
            print(f"keep   {uri} ({doc}): another file of the folder gives this document", file=out)
        elif uri not in renamed_old:
            print(f"remove {uri} ({doc})", file=out)
    print(
        f"plan: {len(plan.add)} to add, {len(plan.change)} changed, {len(plan.remove) - kept} to erase, "
        f"{plan.unchanged} unchanged",
        file=out,
    )


def _ingest(stub, tenant: str, plan: Plan, timeout: float, out) -> RunReport:
    report = RunReport(out)
    for (doc, version), uri in plan.unchanged_versions.items():
        report.already_given(doc, version, uri, "(unchanged in the folder)")
    documents = [
        document(file.content, file.uri) for file in plan.add + plan.change if report.fits(file.uri, len(file.content))
    ]

    def send(batch, seconds):
        return stub.Ingest(gateway_pb2.IngestRequest(tenant_id=tenant, documents=batch), timeout=seconds)

    send_documents(lambda batch: ingest_per_document(send, batch, timeout), documents, report)
    return report


def sync(stub, root: str, tenant: str, dry_run: bool, allow_empty: bool, timeout: float, out=sys.stdout) -> int:
    skipped: list[str] = []
    try:
        source = read_source(root, skipped)
    except SourceUnreadable as err:
        print(f"ragmesh sync: the source cannot be read ({err}); nothing was changed or erased", file=sys.stderr)
        return 1
    if skipped:
        print(skipped_line(skipped), file=out)
    stored = list(stub.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant), timeout=timeout).documents)
    if not source and stored and not allow_empty:
        print(
            f"ragmesh sync: {root} is empty; syncing it would erase all {len({s.document_id for s in stored})} "
            "documents of the tenant. Nothing was erased; pass --allow-empty if that is what you want",
            file=sys.stderr,
        )
        return EXIT_USAGE
    plan = make_plan(source, stored)
    print_plan(plan, out)
    if dry_run:
        return 0
    report = _ingest(stub, tenant, plan, timeout, out)
    failed = report.failed
    if failed and plan.remove:
        print(f"{failed} documents failed to ingest: no document was erased in this run", file=out)
        return EXIT_USAGE
    kept_ids = plan.kept_ids(report.written)
    unverified = 0
    stamp = time.strftime("%Y%m%dT%H%M%S")
    for n, (doc, uri) in enumerate(plan.remove):
        if doc in kept_ids:
            # A file renamed with its front matter's doc_id: the document now comes from the new file, and
            # erasing it would take the new file's text too.
            print(f"kept   {uri} ({doc}): another file of the folder gives this document; not erased", file=out)
            continue
        reply = erase(stub, tenant, doc, False, f"sync-{stamp}-{n}", timeout)
        unverified += not reply.verified
        verdict = "verified" if reply.verified else "NOT VERIFIED"
        print(f"erased {uri} ({doc}): {verdict}, report {reply.report_path}", file=out)
    if unverified:
        return EXIT_SURVIVED
    return EXIT_USAGE if failed else 0


def cmd_sync(args) -> int:
    stub = gateway_pb2_grpc.GatewayStub(gateway_channel(args.gateway))
    return sync(stub, args.path, args.tenant, args.dry_run, args.allow_empty, args.timeout)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "sync", help="make a tenant's index match a folder: ingest new and changed files, erase removed ones"
    )
    p.add_argument("path", help="the folder (document ids are paths under it)")
    p.add_argument("--tenant", default="", help="default: the API key's tenant")
    p.add_argument("--dry-run", action="store_true", help="print the plan and change nothing")
    p.add_argument("--allow-empty", action="store_true", help="an empty folder may erase every document")
    p.set_defaults(func=cmd_sync)
