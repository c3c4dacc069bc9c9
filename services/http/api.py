"""The JSON routes under /v1: one per Gateway RPC. Every call is the gateway's, with the caller's key."""

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Query, UploadFile
from pydantic import BaseModel, ConfigDict, Field

from ragmesh.client import Filters, RagmeshClient, document
from ragmesh.v1 import gateway_pb2, indexer_pb2
from services.http.deps import api_key, gateway, known_query_parameters
from services.http.errors import ERROR_RESPONSES
from services.http.proto_json import model_for, to_json

router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES, dependencies=[Depends(known_query_parameters)])
Client = Annotated[RagmeshClient, Depends(gateway)]
Key = Annotated[str, Depends(api_key)]

AskResponse = model_for(gateway_pb2.AskResponse.DESCRIPTOR)
SearchResponse = model_for(gateway_pb2.SearchResponse.DESCRIPTOR)
IngestResult = model_for(gateway_pb2.IngestResult.DESCRIPTOR)
ChunkView = model_for(gateway_pb2.ChunkView.DESCRIPTOR)
DeleteDocumentResponse = model_for(indexer_pb2.DeleteDocumentResponse.DESCRIPTOR)
ListDocumentsResponse = model_for(gateway_pb2.ListDocumentsResponse.DESCRIPTOR)
FeedbackResponse = model_for(gateway_pb2.FeedbackResponse.DESCRIPTOR)
ListFeedbackResponse = model_for(gateway_pb2.ListFeedbackResponse.DESCRIPTOR)


class Body(BaseModel):
    """A request body: a field it does not have is refused, naming it, as a proto's JSON parser does. A misspelt
    optional field ("filter" for "filters") would otherwise be dropped and the call run without it."""

    model_config = ConfigDict(extra="forbid")


class SearchFilters(Body):
    access_scopes: list[str] = Field(default=[], description="scopes the caller holds (the key must hold them)")
    as_of: str = Field(default="", description="ISO date: search the versions effective then (default now)")
    include_superseded: bool = False
    document_ids: list[str] = []
    content_types: list[str] = []
    exclude_document_ids: list[str] = Field(default=[], description="documents left out of the search")

    def to_client(self) -> Filters:
        return Filters(**self.model_dump())


class AskBody(Body):
    question: str
    tenant_id: str = Field(default="", description="default: the API key's tenant")
    filters: SearchFilters = SearchFilters()
    mode: Literal["hybrid", "bm25", "dense"] = "hybrid"
    include_candidates: bool = False


class SearchBody(Body):
    query: str
    tenant_id: str = ""
    filters: SearchFilters = SearchFilters()
    top_k: int = Field(default=10, ge=1)
    mode: Literal["hybrid", "bm25", "dense"] = "hybrid"
    rerank: bool = False


class FeedbackBody(Body):
    answer_id: str = Field(description="the answer_id of an /v1/ask response")
    rating: Literal["up", "down"]
    tenant_id: str = ""
    comment: str = ""
    expected_document_id: str = Field(default="", description="the document that answers it, when known")
    expected_version: str = ""
    expected_evidence: str = ""
    should_abstain: bool = Field(default=False, description="the corpus cannot answer this question")


class IngestResponse(BaseModel):
    results: list[IngestResult]  # type: ignore[valid-type]
    ok: int
    failed: int


@router.post("/ask", response_model=AskResponse, summary="Answer a question with citations, or abstain")
def ask(body: AskBody, client: Client, key: Key) -> dict[str, Any]:
    reply = client.ask(
        body.question,
        filters=body.filters.to_client(),
        mode=body.mode,
        include_candidates=body.include_candidates,
        tenant=body.tenant_id,
        api_key=key,
    )
    return to_json(reply)


@router.post("/search", response_model=SearchResponse, summary="Ranked passages with every stage's scores")
def search(body: SearchBody, client: Client, key: Key) -> dict[str, Any]:
    reply = client.search(
        body.query,
        top_k=body.top_k,
        mode=body.mode,
        rerank=body.rerank,
        filters=body.filters.to_client(),
        tenant=body.tenant_id,
        api_key=key,
    )
    return to_json(reply)


@router.post("/ingest", response_model=IngestResponse, summary="Ingest uploaded files (multipart/form-data)")
def ingest(
    client: Client,
    key: Key,
    files: Annotated[list[UploadFile], File(description="one or more documents; the file name is the source uri")],
    tenant_id: Annotated[str, Form()] = "",
) -> dict[str, Any]:
    """One result per file; a bad file fails alone (ok false, with the gateway's error code and message)."""
    docs = [document(upload.file.read(), upload.filename or "upload") for upload in files]
    results = [to_json(r) for r in client.ingest(docs, tenant=tenant_id, api_key=key)]
    ok = sum(1 for r in results if r["ok"])
    return {"results": results, "ok": ok, "failed": len(results) - ok}


@router.get(
    "/documents",
    response_model=ListDocumentsResponse,
    summary="The tenant's stored document versions, those in a scope the key holds",
)
def list_documents(
    client: Client,
    key: Key,
    tenant_id: str = "",
    page_size: Annotated[int, Query(ge=0, description="versions per page; 0 = 1000, at most 10000")] = 0,
    page_token: Annotated[str, Query(description="next_page_token of the previous page")] = "",
) -> dict[str, Any]:
    page = client.list_documents_page(page_size=page_size, page_token=page_token, tenant=tenant_id, api_key=key)
    return to_json(page)


@router.delete(
    "/documents/{document_id:path}",
    response_model=DeleteDocumentResponse,
    summary="Delete a document and everything derived from it",
)
def delete_document(document_id: str, client: Client, key: Key, tenant_id: str = "") -> dict[str, Any]:
    return to_json(client.delete_document(document_id, tenant=tenant_id, api_key=key))


@router.get(
    "/chunks/{chunk_id:path}",
    response_model=ChunkView,
    summary="A cited chunk inside its section, with the span to highlight",
)
def get_chunk(
    chunk_id: str,
    client: Client,
    key: Key,
    tenant_id: str = "",
    access_scopes: Annotated[list[str], Query()] = [],  # noqa: B006 - FastAPI copies query defaults
) -> dict[str, Any]:
    return to_json(client.get_chunk(chunk_id, access_scopes=access_scopes, tenant=tenant_id, api_key=key))


@router.post("/feedback", response_model=FeedbackResponse, summary="A reviewer's verdict on an answer")
def feedback(body: FeedbackBody, client: Client, key: Key) -> dict[str, Any]:
    reply = client.feedback(
        body.answer_id,
        body.rating,
        comment=body.comment,
        expected_document_id=body.expected_document_id,
        expected_version=body.expected_version,
        expected_evidence=body.expected_evidence,
        should_abstain=body.should_abstain,
        tenant=body.tenant_id,
        api_key=key,
    )
    return to_json(reply)


@router.get(
    "/feedback",
    response_model=ListFeedbackResponse,
    summary="The tenant's feedback, oldest first, each with its triage pile and evaluation case (writer keys)",
)
def list_feedback(
    client: Client,
    key: Key,
    tenant_id: str = "",
    since: Annotated[float, Query(ge=0, description="given at or after this time, seconds since the epoch")] = 0,
    rating: Literal["up", "down", ""] = "",
    page_size: Annotated[int, Query(ge=0, description="entries per page; 0 = 1000, at most 10000")] = 0,
    page_token: Annotated[str, Query(description="next_page_token of the previous page")] = "",
) -> dict[str, Any]:
    page = client.list_feedback_page(
        since=since, rating=rating or 0, page_size=page_size, page_token=page_token, tenant=tenant_id, api_key=key
    )
    return to_json(page)
