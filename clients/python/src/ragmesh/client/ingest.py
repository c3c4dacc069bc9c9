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


def ingest_per_document(
    send: Send, documents: Sequence[common_pb2.SourceDocument], seconds_per_document: float
) -> Iterator[gateway_pb2.IngestResult]:
    """One result per document, in order. The call's deadline is `seconds_per_document` for each document it
    carries; when it passes, the document then being indexed gets a DEADLINE_EXCEEDED result and the documents
    after it go again in a new call. Any other error of the call is raised, as before."""
    pending = list(documents)
    while pending:
        answered = 0
        try:
            for result in send(pending, seconds_per_document * len(pending)):
                answered += 1
                yield result
            return
        except grpc.RpcError as err:
            if answered == len(pending):  # every document was answered; only the stream's end came late
                return
            if err.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                raise
        yield _timed_out(pending[answered], seconds_per_document)
        pending = pending[answered + 1 :]


def _timed_out(doc: common_pb2.SourceDocument, seconds_per_document: float) -> gateway_pb2.IngestResult:
    name = doc.meta.document_id or doc.meta.source_uri or "document"
    return gateway_pb2.IngestResult(
        document_id=doc.meta.document_id,
        source_uri=doc.meta.source_uri,
        ok=False,
        error_code=grpc.StatusCode.DEADLINE_EXCEEDED.name,
        error=(
            f"{name} ({len(doc.content)} bytes) was not indexed within the call's deadline "
            f"({seconds_per_document:g} s per document); the indexer stops such a document without writing it "
            "(unless the deadline passed during the write itself): ingest it again with a longer timeout, which "
            "replaces whatever was written"
        ),
    )
