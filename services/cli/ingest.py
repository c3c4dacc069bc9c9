"""Client-side ingestion: documents -> bounded Ingest requests -> one result line per document. `ragmesh
ingest` and `ragmesh sync` both run their documents through `send_documents`, so both bound their requests
and both say when a later file of the run replaced an earlier one's document."""

import dataclasses
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

from ragmesh.client import RagmeshClient
from services.cli.documents import collect_files, skipped_line, to_source_document
from shared.stubs import common_pb2, gateway_pb2

MAX_BATCH_BYTES = 32 * 1024 * 1024
# A file that cannot fit in one Ingest request under the gateway's 64 MiB gRPC message limit.
MAX_FILE_BYTES = 60 * 1024 * 1024
BATCH_DOCUMENTS = 8

# One request's documents -> a result per document (RagmeshClient.ingest, or ingest_per_document on a stub).
IngestBatch = Callable[[list[common_pb2.SourceDocument]], Iterable[gateway_pb2.IngestResult]]


@dataclasses.dataclass
class RunReport:
    """The result line of every document of one run, and the counts."""

    out: TextIO
    bar: Any = None  # a tqdm bar, written through so the lines and the bar do not tangle
    ok: int = 0
    failed: int = 0
    written: set[str] = dataclasses.field(default_factory=set)
    # (document id, version) -> the source uri that gives it, and where ("earlier in this run").
    given: dict[tuple[str, str], tuple[str, str]] = dataclasses.field(default_factory=dict)

    def already_given(self, document_id: str, version: str, uri: str, where: str) -> None:
        """A document version another file gives: a file of this run giving it too replaces that file's text."""
        self.given[(document_id, version)] = (uri, where)

    def _line(self, text: str) -> None:
        if self.bar is None:
            print(text, file=self.out)
        else:
            self.bar.write(text, file=self.out)
            self.bar.update(1)

    def fail(self, uri: str, code: str, reason: str) -> None:
        self.failed += 1
        self._line(f"FAILED {uri}: {code}: {reason}")

    def fits(self, uri: str, size: int) -> bool:
        """Whether a document of `size` bytes can be sent; one too large for any request fails alone here, so
        it never stops the run's other documents."""
        if size <= MAX_FILE_BYTES:
            return True
        reason = f"{size} bytes, over the {MAX_FILE_BYTES}-byte limit of one Ingest request"
        self.fail(uri, "RESOURCE_EXHAUSTED", reason)
        return False

    def record(self, result: gateway_pb2.IngestResult) -> None:
        if not result.ok:
            self.fail(result.source_uri, result.error_code, result.error)
            return
        self.written.add(result.document_id)
        # The gateway refuses a second file giving the same document version within one request; across the
        # run's requests the later file has already replaced the earlier one's text, which is said, not hidden.
        earlier, where = self.given.setdefault(
            (result.document_id, result.version), (result.source_uri, "earlier in this run")
        )
        if earlier != result.source_uri:
            self.failed += 1
            self._line(
                f"FAILED {result.source_uri}: {result.document_id}@{result.version} was also given by "
                f"{earlier} {where}, and this file's text replaced it: give each file its own doc_id or version"
            )
            return
        self.ok += 1
        line = (
            f"ok     {result.source_uri} -> {result.document_id}@{result.version}: "
            f"{result.chunks_written} written, {result.chunks_unchanged} unchanged, "
            f"{result.chunks_removed} removed"
        )
        # Inferred governance is shown, for the operator to confirm or override in front matter.
        for stated in result.statements:
            line += f"\n       {stated.field} {stated.value!r} ({stated.source}: {stated.evidence!r}): {stated.outcome}"
        self._line(line)


def batches(documents: Iterable[common_pb2.SourceDocument], max_docs: int) -> Iterator[list[common_pb2.SourceDocument]]:
    """Bounded requests (count and bytes); a bad document still fails alone inside its batch."""
    batch: list[common_pb2.SourceDocument] = []
    size = 0
    for doc in documents:
        if batch and (len(batch) >= max_docs or size + len(doc.content) > MAX_BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(doc)
        size += len(doc.content)
    if batch:
        yield batch


def send_documents(
    ingest_batch: IngestBatch,
    documents: Iterable[common_pb2.SourceDocument],
    report: RunReport,
    max_docs: int = BATCH_DOCUMENTS,
) -> None:
    for docs in batches(documents, max_docs):
        for result in ingest_batch(docs):
            report.record(result)


def ingest(
    client: RagmeshClient,
    paths: list[str],
    tenant: str,
    timeout: float,
    batch: int = BATCH_DOCUMENTS,
    out=sys.stdout,
) -> tuple[int, int]:
    from tqdm import tqdm

    skipped: list[str] = []
    files = collect_files(paths, skipped)
    if skipped:
        print(skipped_line(skipped), file=out)
    with tqdm(total=len(files), unit="doc", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:
        report = RunReport(out, bar)
        # Sized before they are read, and read as sent, so a large folder is never all in memory.
        sendable = [(path, uri) for path, uri in files if report.fits(uri, path.stat().st_size)]
        documents = (to_source_document(path, uri) for path, uri in sendable)
        send_documents(lambda docs: client.ingest(docs, tenant=tenant, timeout=timeout), documents, report, batch)
    return report.ok, report.failed
