"""An OpenAI-compatible chat endpoint: existing chat clients ask the corpus.

POST /v1/chat/completions: the last user message is the question, read with the question before it when it only
follows that one up ("and for business customers?", "how do i fix it?": services/http/conversation.py; the reply
says how it was asked); assistant turns are not read. An abstention of a later message asked alone says so, so
that a follow-up it did not recognise is asked in full. The model name selects the pipeline: `ragmesh` asks as the
API key's tenant, `ragmesh:<tenant>` names the tenant (the key must belong to it). The reply's content
is the answer with numbered markers [1], [2], ... and a Sources list; the same citations, with their
character offsets, are in the completion's `citations` field. An abstention is a normal completion that
says what is missing and lists suggested reading (also in `suggested_reading`). With `stream: true` the
completion comes as server-sent events (chat.completion.chunk objects, then `data: [DONE]`); the gateway
answers whole, so the chunks are the finished answer in pieces. `access_scopes` (a ragmesh field: the openai
client's `extra_body`) names scopes to read with besides public, each held by the key, as in /v1/ask.
"""

import json
import re
import time
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import grpc
from fastapi import APIRouter, Depends
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from ragmesh.client import Filters, RagmeshClient
from ragmesh.v1 import gateway_pb2
from services.http.conversation import standalone_question
from services.http.deps import api_key, gateway
from services.http.errors import ERROR_RESPONSES, HttpError
from services.http.proto_json import to_json
from shared.text import heading_prefix

MODEL = "ragmesh"
_MODEL_NAME = re.compile(r"ragmesh(?::(?P<tenant>[^\s:]+))?")
router = APIRouter(prefix="/v1", responses=ERROR_RESPONSES, tags=["openai"])


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    # A string, or OpenAI's list of content parts ({"type": "text", "text": ...}).
    content: str | list[dict[str, Any]] | None = None


class ChatCompletionRequest(BaseModel):
    """OpenAI's request; sampling options (temperature, max_tokens, ...) are accepted and not used."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(description="`ragmesh` (the key's tenant) or `ragmesh:<tenant>`")
    messages: list[ChatMessage]
    stream: bool = False
    # One answer per question: the funnel is deterministic, so n copies would say the same thing n times.
    n: int = Field(default=1, ge=1, le=1, description="must be 1: ragmesh gives one answer per question")
    # ragmesh's own field (the openai client's `extra_body`): without it only public documents are read, so a key
    # holding `hr` could not reach an hr document through this door at all.
    access_scopes: list[str] = Field(
        default=[], description="scopes to read with besides public; the API key must hold each (else 403)"
    )


def tenant_of(model: str) -> str:
    match = _MODEL_NAME.fullmatch(model)
    if not match:
        raise HttpError(
            grpc.StatusCode.NOT_FOUND,
            f"model {model!r} does not exist: use {MODEL!r} (the API key's tenant) or '{MODEL}:<tenant>'",
        )
    return match["tenant"] or ""


def _text(content: str | list[dict[str, Any]] | None) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if part.get("type") == "text")
    return content or ""


def user_messages(messages: list[ChatMessage]) -> list[str]:
    """What the user said, turn by turn; the last turn must have text (it is the question)."""
    said = [_text(message.content).strip() for message in messages if message.role == "user"]
    if not said or not said[-1]:
        raise HttpError(grpc.StatusCode.INVALID_ARGUMENT, "messages: the last user message has no text (the question)")
    return said


def _citation(index: int, cite: Any) -> dict[str, Any]:
    return {"index": index, **to_json(cite)}


def _reading(chunk: Any) -> dict[str, Any]:
    return {
        "chunk_id": chunk.chunk_id,
        "document_id": chunk.meta.document_id,
        "version": chunk.meta.version,
        "title": chunk.meta.title,
        "heading_path": list(chunk.heading_path),
    }


# Said with an abstention of a message after the first that was asked alone: it was not read as a follow-up
# (services/http/conversation.py), so if it is one, it was asked without what it refers to.
ALONE = (
    "This message was answered from the documents on its own, without the conversation before it: "
    "if it follows up an earlier question, ask it in full."
)


def render(reply: gateway_pb2.AskResponse, asked: str = "", follow_up: bool = False) -> str:
    """The message content: the answer with its markers and sources, or what is missing and what to read; the
    question asked when it is not the message as written (a follow-up read with the question before it); and
    when the question named a past time, which versions were searched (an answer from a superseded version must
    say why it is not today's)."""
    searched = ["", f"Asked as: {asked}"] if asked else []
    if reply.time_reference:
        searched += ["", f"Searched: {reply.time_reference}."]
    if reply.read_as:  # the question answered is not the one written: say which
        searched += ["", f"Read as: {reply.read_as}"]
    alone = ["", ALONE] if follow_up and not asked and reply.answer.abstained else []
    return "\n".join(_answer_lines(reply) + searched + alone)


def _answer_lines(reply: gateway_pb2.AskResponse) -> list[str]:
    answer = reply.answer
    if answer.abstained:
        lines = [f"I cannot answer this from the documents: {answer.missing or 'they do not cover it'}."]
        return lines + _suggested(reply.suggested_reading, "Suggested reading:")
    text = answer.text
    # The extractive generator writes the markers itself; an answer without them gets them at the end.
    missing = [i for i in range(1, len(answer.citations) + 1) if f"[{i}]" not in text]
    if missing:
        text += " " + "".join(f"[{i}]" for i in missing)
    lines = [text, "", "Sources:"]
    for i, cite in enumerate(answer.citations, start=1):
        where = heading_prefix(cite.title, list(cite.heading_path))
        lines.append(f'[{i}] {cite.document_id}@{cite.version}{": " + where if where else ""}: "{cite.quote}"')
    # A message of several questions answered in part: what to read for the parts not found.
    return lines + _suggested(reply.suggested_reading, "Suggested reading for the questions not found:")


def _suggested(passages, title: str) -> list[str]:
    """The closest passages, each named as a source is: its document, then its title and section path."""
    lines = ["", title] if passages else []
    for scored in passages:
        where = heading_prefix(scored.chunk.meta.title, list(scored.chunk.heading_path))
        lines.append(f"- {scored.chunk.meta.document_id}@{scored.chunk.meta.version}: {where}")
    return lines


def _extras(reply: gateway_pb2.AskResponse, asked: str = "") -> dict[str, Any]:
    answer = reply.answer
    return {
        "citations": [_citation(i, c) for i, c in enumerate(answer.citations, start=1)],
        "suggested_reading": [_reading(s.chunk) for s in reply.suggested_reading],
        "ragmesh": {
            "answer_id": reply.answer_id,
            "trace_id": reply.trace_id,
            "abstained": answer.abstained,
            "reason": answer.reason,
            "missing": answer.missing,
            "degraded": reply.degraded,
            "time_reference": reply.time_reference,
            "read_as": reply.read_as,
            "asked_as": asked,
        },
    }


def completion(
    reply: gateway_pb2.AskResponse, model: str, created: int, asked: str = "", follow_up: bool = False
) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{reply.answer_id}",
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": render(reply, asked, follow_up)},
                "finish_reason": "stop",
                "logprobs": None,
            }
        ],
        **_extras(reply, asked),
    }


def pieces(text: str) -> list[str]:
    """The content in word-sized pieces that join back to it exactly."""
    return re.findall(r"\S+\s*|\s+", text)


def stream(
    reply: gateway_pb2.AskResponse, model: str, created: int, asked: str = "", follow_up: bool = False
) -> Iterator[str]:
    base = {"id": f"chatcmpl-{reply.answer_id}", "object": "chat.completion.chunk", "created": created, "model": model}

    def event(delta: dict[str, Any], finish: Literal["stop"] | None = None, **extra: Any) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return f"data: {json.dumps({**base, 'choices': [choice], **extra})}\n\n"

    yield event({"role": "assistant", "content": ""})
    for piece in pieces(render(reply, asked, follow_up)):
        yield event({"content": piece})
    yield event({}, "stop", **_extras(reply, asked))
    yield "data: [DONE]\n\n"


@router.post("/chat/completions", summary="OpenAI-compatible chat completion over the corpus")
def chat_completions(
    body: ChatCompletionRequest,
    client: Annotated[RagmeshClient, Depends(gateway)],
    key: Annotated[str, Depends(api_key)],
) -> Any:
    tenant = tenant_of(body.model)
    said = user_messages(body.messages)
    # The last message, or a follow-up read with the question before it (services/http/conversation.py).
    question = standalone_question(said)
    filters = Filters(access_scopes=body.access_scopes)
    # Before any event, so that errors keep their status.
    reply = client.ask(question, filters=filters, tenant=tenant, api_key=key)
    asked = question if question != said[-1] else ""
    if asked and reply.answer.abstained:
        # Read with the question before it, a follow-up can name too much for one answer ("what is the consumer
        # refund window; annual plans?" was refused where "what about annual plans?" alone is answered): a
        # refused composition never costs the answer the message gets on its own.
        alone = client.ask(said[-1], filters=filters, tenant=tenant, api_key=key)
        if not alone.answer.abstained:
            reply, asked = alone, ""
    created = int(time.time())
    follow_up = len(said) > 1
    if body.stream:
        events = stream(reply, body.model, created, asked, follow_up)
        return StreamingResponse(events, media_type="text/event-stream")
    return completion(reply, body.model, created, asked, follow_up)


@router.get("/models", summary="The models (pipelines) this endpoint serves")
def models() -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "ragmesh"}],
    }
