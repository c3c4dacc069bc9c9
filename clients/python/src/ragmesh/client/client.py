"""RagmeshClient: one channel to the gateway and a typed method per Gateway RPC.

Calls return the generated messages (`ragmesh.v1`) and raise `grpc.RpcError` with the gateway's status
and message. Every call has a deadline (the client's default unless the call names one); UNAVAILABLE
is retried for the calls that are safe to repeat (ragmesh.client.retry).
"""

import dataclasses
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Literal, cast

import grpc

from ragmesh.client.auth import DEFAULT_GATEWAY_ADDR, GATEWAY_ADDR_ENV, KeySource, bearer_metadata, key_from_env
from ragmesh.client.ingest import SECONDS_PER_KIB, ingest_per_document
from ragmesh.client.retry import ROUND_ROBIN, RetryPolicy
from ragmesh.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc, indexer_pb2, retriever_pb2

Mode = Literal["hybrid", "bm25", "dense"]
RatingName = Literal["up", "down"]
MODES: dict[str, retriever_pb2.RetrievalMode] = {
    "hybrid": retriever_pb2.RETRIEVAL_MODE_HYBRID,
    "bm25": retriever_pb2.RETRIEVAL_MODE_BM25,
    "dense": retriever_pb2.RETRIEVAL_MODE_DENSE,
}
RATINGS: dict[str, gateway_pb2.Rating] = {"up": gateway_pb2.RATING_THUMBS_UP, "down": gateway_pb2.RATING_THUMBS_DOWN}
# The gateway accepts messages up to 64 MiB (an Ingest batch); answers with candidates can be large too.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
DEFAULT_RETRY = RetryPolicy()


@dataclasses.dataclass(frozen=True)
class Filters:
    """Applied inside the index query. `as_of` (ISO date) searches the versions effective then."""

    access_scopes: Sequence[str] = ()
    as_of: str = ""
    include_superseded: bool = False
    document_ids: Sequence[str] = ()
    content_types: Sequence[str] = ()
    exclude_document_ids: Sequence[str] = ()

    def to_proto(self) -> common_pb2.SearchFilters:
        return common_pb2.SearchFilters(
            access_scopes=list(self.access_scopes),
            as_of=self.as_of,
            include_superseded=self.include_superseded,
            document_ids=list(self.document_ids),
            content_types=list(self.content_types),
            exclude_document_ids=list(self.exclude_document_ids),
        )


def document(
    content: bytes,
    source_uri: str,
    *,
    document_id: str = "",
    version: str = "",
    title: str = "",
    content_type: str = "",
    access_scopes: Sequence[str] = (),
    effective_from: str = "",
    effective_to: str = "",
) -> common_pb2.SourceDocument:
    """A document for `ingest`. Empty fields are taken from the file's front matter or derived by the chunker."""
    return common_pb2.SourceDocument(
        meta=common_pb2.DocumentMeta(
            source_uri=source_uri,
            document_id=document_id,
            version=version,
            title=title,
            content_type=content_type,
            access_scopes=list(access_scopes),
            effective_from=effective_from,
            effective_to=effective_to,
        ),
        content=content,
    )


def _every_page(fetch: Callable[[str], Any]) -> Iterator[Any]:
    """The pages of a list call (AIP-158), `fetch` asked with each page's token until one comes back without."""
    token = ""
    while True:
        page = fetch(token)
        yield page
        token = page.next_page_token
        if not token:
            return


def _rating(rating: RatingName | int) -> gateway_pb2.Rating:
    if isinstance(rating, int):
        return cast(gateway_pb2.Rating, rating)  # the enum's number
    if rating not in RATINGS:
        raise ValueError(f"rating must be one of {sorted(RATINGS)}, not {rating!r}")
    return RATINGS[rating]


def _mode(mode: Mode | int) -> retriever_pb2.RetrievalMode:
    if isinstance(mode, int):
        return cast(retriever_pb2.RetrievalMode, mode)  # the enum's number
    if mode not in MODES:
        raise ValueError(f"mode must be one of {sorted(MODES)}, not {mode!r}")
    return MODES[mode]


class RagmeshClient:
    """A client of one gateway.

    address: host:port; default RAGMESH_GATEWAY_ADDR, else 127.0.0.1:7070.
    api_key: a key, or a function tenant id -> key; default RAGMESH_API_KEY. "" sends no key.
    tenant: the tenant named in requests; "" lets the gateway take the key's tenant.
    timeout: the default deadline of a call, seconds.
    tls: True for TLS with the system's roots, or PEM root certificates (bytes) to trust instead.
    retry: the policy for UNAVAILABLE (None: no retries).
    channel: a channel the caller made (its own credentials, interceptors and options) instead of one made
    here from address, tls, retry and channel_options.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        api_key: KeySource | None = None,
        tenant: str = "",
        timeout: float = 60.0,
        tls: bool | bytes = False,
        retry: RetryPolicy | None = DEFAULT_RETRY,
        channel_options: Sequence[tuple[str, str | int]] = (),
        channel: grpc.Channel | None = None,
    ):
        self.address = address or os.environ.get(GATEWAY_ADDR_ENV, DEFAULT_GATEWAY_ADDR)
        self.tenant = tenant
        self.timeout = timeout
        self._key: KeySource = key_from_env() if api_key is None else api_key
        options: list[tuple[str, str | int]] = [
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ]
        if retry is not None:
            options += [("grpc.enable_retries", 1), ("grpc.service_config", retry.service_config())]
        else:
            options += [("grpc.enable_retries", 0), ("grpc.service_config", json.dumps(ROUND_ROBIN))]
        options += list(channel_options)
        if channel is not None:
            self.channel = channel
        elif tls:
            roots = tls if isinstance(tls, bytes) else None
            self.channel = grpc.secure_channel(self.address, grpc.ssl_channel_credentials(roots), options=options)
        else:
            self.channel = grpc.insecure_channel(self.address, options=options)
        self.stub = gateway_pb2_grpc.GatewayStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def __enter__(self) -> "RagmeshClient":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _call(self, tenant: str | None, timeout: float | None, api_key: str | None) -> tuple[str, dict]:
        """The request's tenant and the call's deadline and credentials."""
        tenant = self.tenant if tenant is None else tenant
        if api_key is None:
            api_key = self._key(tenant) if callable(self._key) else self._key
        return tenant, {"timeout": self.timeout if timeout is None else timeout, "metadata": bearer_metadata(api_key)}

    def ask(
        self,
        question: str,
        *,
        filters: Filters | None = None,
        mode: Mode | int = "hybrid",
        include_candidates: bool = False,
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
    ) -> gateway_pb2.AskResponse:
        """An answer with citations, or an abstention with what is missing and suggested reading."""
        tenant, call = self._call(tenant, timeout, api_key)
        request = gateway_pb2.AskRequest(
            tenant_id=tenant,
            question=question,
            filters=(filters or Filters()).to_proto(),
            include_candidates=include_candidates,
            mode=_mode(mode),
        )
        return self.stub.Ask(request, **call)

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        mode: Mode | int = "hybrid",
        rerank: bool = False,
        filters: Filters | None = None,
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
    ) -> gateway_pb2.SearchResponse:
        """Ranked passages with every stage's scores."""
        tenant, call = self._call(tenant, timeout, api_key)
        request = gateway_pb2.SearchRequest(
            tenant_id=tenant,
            query=query,
            filters=(filters or Filters()).to_proto(),
            top_k=top_k,
            mode=_mode(mode),
            rerank=rerank,
        )
        return self.stub.Search(request, **call)

    def ingest(
        self,
        documents: Iterable[common_pb2.SourceDocument],
        *,
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
        seconds_per_kib: float = SECONDS_PER_KIB,
    ) -> Iterator[gateway_pb2.IngestResult]:
        """One result per document, as each is indexed; a bad document fails alone (ok=False, error).
        `timeout` is per document, and `seconds_per_kib` more for each KiB of it: a document not indexed in
        time fails alone (DEADLINE_EXCEEDED) and the ones after it are sent again (ragmesh.client.ingest)."""
        tenant, call = self._call(tenant, timeout, api_key)

        def send(docs, seconds):
            request = gateway_pb2.IngestRequest(tenant_id=tenant, documents=list(docs))
            return self.stub.Ingest(request, **{**call, "timeout": seconds})

        yield from ingest_per_document(send, list(documents), call["timeout"], seconds_per_kib)

    def delete_document(
        self, document_id: str, *, tenant: str | None = None, timeout: float | None = None, api_key: str | None = None
    ) -> indexer_pb2.DeleteDocumentResponse:
        """Deletes every version of the document and everything derived from it."""
        tenant, call = self._call(tenant, timeout, api_key)
        return self.stub.DeleteDocument(
            indexer_pb2.DeleteDocumentRequest(tenant_id=tenant, document_id=document_id), **call
        )

    def list_documents(
        self,
        *,
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
        page_size: int = 0,
    ) -> list[indexer_pb2.StoredDocument]:
        """The tenant's stored document versions (id, version, source, hash, chunks, validity, title, scopes),
        those in a scope the key holds: every page, fetched `page_size` at a time (0: the server's default), each
        page within `timeout`."""
        pages = _every_page(
            lambda token: self.list_documents_page(
                page_size=page_size, page_token=token, tenant=tenant, timeout=timeout, api_key=api_key
            )
        )
        return [document for page in pages for document in page.documents]

    def list_documents_page(
        self,
        *,
        page_size: int = 0,
        page_token: str = "",
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
    ) -> gateway_pb2.ListDocumentsResponse:
        """One page of list_documents, in (document_id, version) order, and the token of the next page (empty
        after the last)."""
        tenant, call = self._call(tenant, timeout, api_key)
        request = gateway_pb2.ListDocumentsRequest(tenant_id=tenant, page_size=page_size, page_token=page_token)
        return self.stub.ListDocuments(request, **call)

    def get_chunk(
        self,
        chunk_id: str,
        *,
        access_scopes: Sequence[str] = (),
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
    ) -> gateway_pb2.ChunkView:
        """A cited chunk inside its section, with the span to highlight (offsets into section_text)."""
        tenant, call = self._call(tenant, timeout, api_key)
        request = retriever_pb2.GetChunkRequest(tenant_id=tenant, chunk_id=chunk_id, access_scopes=list(access_scopes))
        return self.stub.GetChunk(request, **call)

    def feedback(
        self,
        answer_id: str,
        rating: RatingName | int,
        *,
        comment: str = "",
        expected_document_id: str = "",
        expected_version: str = "",
        expected_evidence: str = "",
        should_abstain: bool = False,
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
    ) -> gateway_pb2.FeedbackResponse:
        """A reviewer's verdict on an answer, stored in the gateway's answer log with the answer's trace."""
        tenant, call = self._call(tenant, timeout, api_key)
        request = gateway_pb2.FeedbackRequest(
            tenant_id=tenant,
            answer_id=answer_id,
            rating=_rating(rating),
            comment=comment,
            expected_document_id=expected_document_id,
            expected_version=expected_version,
            expected_evidence=expected_evidence,
            should_abstain=should_abstain,
        )
        return self.stub.Feedback(request, **call)

    def list_feedback(
        self,
        *,
        since: float = 0.0,
        rating: RatingName | int = 0,
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
        page_size: int = 0,
    ) -> gateway_pb2.ListFeedbackResponse:
        """The tenant's feedback since `since` (seconds since the epoch), oldest first, each entry with its
        triage pile and evaluation case; `rating` "up" or "down" keeps that rating only. Writer keys. Every
        page, fetched `page_size` at a time (0: the server's default), each page within `timeout`."""
        pages = _every_page(
            lambda token: self.list_feedback_page(
                since=since,
                rating=rating,
                page_size=page_size,
                page_token=token,
                tenant=tenant,
                timeout=timeout,
                api_key=api_key,
            )
        )
        return gateway_pb2.ListFeedbackResponse(entries=[entry for page in pages for entry in page.entries])

    def list_feedback_page(
        self,
        *,
        since: float = 0.0,
        rating: RatingName | int = 0,
        page_size: int = 0,
        page_token: str = "",
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
    ) -> gateway_pb2.ListFeedbackResponse:
        """One page of list_feedback, oldest first, and the token of the next page (empty after the last)."""
        tenant, call = self._call(tenant, timeout, api_key)
        request = gateway_pb2.ListFeedbackRequest(
            tenant_id=tenant, since=since, rating=_rating(rating), page_size=page_size, page_token=page_token
        )
        return self.stub.ListFeedback(request, **call)

    def record_feedback_export(
        self,
        path: str,
        feedback_ids: Sequence[str],
        *,
        tenant: str | None = None,
        timeout: float | None = None,
        api_key: str | None = None,
    ) -> gateway_pb2.RecordFeedbackExportResponse:
        """Tells the gateway which feedback's cases were written to `path` (absolute), so an erasure can
        rewrite that file where the gateway reaches it. Writer keys."""
        tenant, call = self._call(tenant, timeout, api_key)
        request = gateway_pb2.RecordFeedbackExportRequest(tenant_id=tenant, path=path, feedback_ids=list(feedback_ids))
        return self.stub.RecordFeedbackExport(request, **call)
