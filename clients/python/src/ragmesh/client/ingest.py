"""Ingest with a deadline per document: one slow document fails alone instead of ending the whole call.

The gateway indexes a request's documents one after another and streams a result for each. A call's deadline
covers them all, so without this a document that outlives it (a very long file, embedded on a CPU) ends the
stream: the caller learns nothing of the documents after it, and those were never tried.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence

import grpc

from ragmesh.v1 import common_pb2, gateway_pb2

# send(documents, deadline seconds) -> the gateway's result stream for those documents.
Send = Callable[[Sequence[common_pb2.SourceDocument], float], Iterable[gateway_pb2.IngestResult]]

# A document's deadline grows with its size: embedding its chunks is most of indexing. On two CPU cores a
# 1.8 MB Markdown manual (1,200 chunks) took 281 s, ~0.15 s per KiB, past a flat 120 s; twice that rate
# leaves room for a busy machine.
SECONDS_PER_KIB = 0.3


def document_deadline(
    doc: common_pb2.SourceDocument, seconds_per_document: float, seconds_per_kib: float = SECONDS_PER_KIB
) -> float:
    """Seconds one document may take: the base, and `seconds_per_kib` for each KiB of it."""
    return seconds_per_document + seconds_per_kib * len(doc.content) / 1024


def ingest_per_document(
    send: Send,
    documents: Sequence[common_pb2.SourceDocument],
    seconds_per_document: float,
    seconds_per_kib: float = SECONDS_PER_KIB,
) -> Iterator[gateway_pb2.IngestResult]:
    """One result per document, in order. The call's deadline is each carried document's deadline
    (`seconds_per_document`, more for a large one: document_deadline) added up; when it passes, the document
    then being indexed gets a DEADLINE_EXCEEDED result and the documents after it go again in a new call. Any
    other error of the call is raised, as before."""
    pending = list(documents)
    while pending:
        answered = 0
        try:
            deadline = sum(document_deadline(d, seconds_per_document, seconds_per_kib) for d in pending)
            for result in send(pending, deadline):
                answered += 1
                yield result
            return
        except grpc.RpcError as err:
            if answered == len(pending):  # every document was answered; only the stream's end came late
                return
            if err.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                raise
        yield _timed_out(pending[answered], seconds_per_document, seconds_per_kib)
        pending = pending[answered + 1 :]


def _timed_out(
    doc: common_pb2.SourceDocument, seconds_per_document: float, seconds_per_kib: float
) -> gateway_pb2.IngestResult:
    name = doc.meta.document_id or doc.meta.source_uri or "document"
    return gateway_pb2.IngestResult(
        document_id=doc.meta.document_id,
        source_uri=doc.meta.source_uri,
        ok=False,
        error_code=grpc.StatusCode.DEADLINE_EXCEEDED.name,
        error=(
            f"{name} ({len(doc.content)} bytes) was not indexed within its deadline "
            f"({document_deadline(doc, seconds_per_document, seconds_per_kib):.0f} s: {seconds_per_document:g} s "
            f"per document and {seconds_per_kib:g} s per KiB); the indexer stops such a document without writing "
            "it (unless the deadline passed during the write itself): ingest it again with a longer timeout, which "
            "replaces whatever was written"
        ),
    )
