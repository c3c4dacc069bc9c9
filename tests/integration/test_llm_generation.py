"""Real LLM generation: SmolLM2 (GGUF) behind llama.cpp's OpenAI-compatible server on loopback,
called by a real generator process, answers checked by a real gateway process."""

import json
import subprocess
import sys
import time
import urllib.request

import pytest

from services.cli.mesh import free_port
from services.generator import selection
from services.generator.llm import packaged_gguf
from services.generator.selftest import check_llama_cpp
from shared import convert
from shared.config import GeneratorConfig
from shared.stubs import gateway_pb2
from shared.text import answer_units
from tests.support.mesh import TENANT, extra_stages

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(url)


@pytest.fixture(scope="module")
def llama_server():
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            packaged_gguf(),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_threads",
            "2",
            "--n_ctx",
            "4096",
            "--seed",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/v1/models", proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(30)


@pytest.fixture(scope="module")
def llm_gateway(mesh, ingested, llama_server, tmp_path_factory):
    generator_port, gateway_port = free_port(), free_port()
    env = mesh.env()
    env.update(
        {
            "RAGMESH_GENERATOR_PORT": str(generator_port),
            "RAGMESH_GENERATOR_METRICS_PORT": "0",
            "RAGMESH_GENERATOR_ADDR": f"127.0.0.1:{generator_port}",
            "RAGMESH_GENERATOR_BACKEND": "openai",
            "RAGMESH_GENERATOR_OPENAI_URL": llama_server,
            "RAGMESH_GATEWAY_PORT": str(gateway_port),
            "RAGMESH_GATEWAY_METRICS_PORT": "0",
            # The gate is off so that every question reaches the model: this tests the citation checks.
            "RAGMESH_GATEWAY_ABSTAIN_THRESHOLD": "-1000",
            "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
            "RAGMESH_DATA_DIR": str(tmp_path_factory.mktemp("llm-gateway")),
        }
    )
    with extra_stages(["generator", "gateway"], env, gateway_port) as gateway:
        yield gateway


@pytest.fixture(scope="module")
def llamacpp_gateway(mesh, ingested, tmp_path_factory):
    """The generator stage running the GGUF model in-process (the llamacpp backend, self-test included)."""
    generator_port, gateway_port = free_port(), free_port()
    env = mesh.env()
    env.update(
        {
            "RAGMESH_GENERATOR_PORT": str(generator_port),
            "RAGMESH_GENERATOR_METRICS_PORT": "0",
            "RAGMESH_GENERATOR_ADDR": f"127.0.0.1:{generator_port}",
            "RAGMESH_GENERATOR_BACKEND": "llamacpp",
            # The Asks below wait up to 300 s: a CPU model on busy cores can take longer than the default 120 s.
            "RAGMESH_GATEWAY_GENERATOR_TIMEOUT_SECONDS": "280",
            "RAGMESH_GATEWAY_PORT": str(gateway_port),
            "RAGMESH_GATEWAY_METRICS_PORT": "0",
            "RAGMESH_GATEWAY_ABSTAIN_THRESHOLD": "-1000",
            "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
            "RAGMESH_DATA_DIR": str(tmp_path_factory.mktemp("llamacpp-gateway")),
        }
    )
    # The generator listens only after its llama.cpp self-test and model load; extra_stages waits for it.
    with extra_stages(["generator", "gateway"], env, gateway_port) as gateway:
        yield gateway


def test_selftest_evaluates_a_long_prompt_on_a_portable_build():
    report = check_llama_cpp(packaged_gguf())
    assert report["prompt_tokens"] >= 300
    # The wheel is built for x86-64-v3 (deploy/llm/install.sh), whatever the build machine's CPU has.
    info = report["system_info"]
    assert "AVX2 = 1" in info, info
    assert "AMX" not in info and "AVX512 = 1" not in info, info


def test_llama_server_answers_a_prompt_of_several_hundred_tokens(llama_server):
    passage = " ".join(f"Clause {n}: the customer may cancel the plan {n} days before renewal." for n in range(40))
    body = {
        "messages": [{"role": "user", "content": passage + "\nHow many days before renewal for clause 7?"}],
        "max_tokens": 8,
        "temperature": 0,
    }
    request = urllib.request.Request(
        f"{llama_server}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as reply:
        completion = json.loads(reply.read())
    assert completion["usage"]["prompt_tokens"] >= 300
    assert completion["choices"][0]["message"]["content"]


def test_llamacpp_backend_answers_from_a_long_context(llamacpp_gateway):
    response = llamacpp_gateway.Ask(
        gateway_pb2.AskRequest(tenant_id=TENANT, question="what is the refund policy"), timeout=300
    )
    answer = response.answer
    assert answer.generator_id.startswith("gguf:SmolLM2"), answer.generator_id
    assert not answer.reason.startswith("unparseable_output"), answer.reason
    # Several passages, hundreds of tokens: the prompt length that crashed a natively built llama.cpp.
    assert sum(p.chunk.token_count for p in response.context) >= 200
    if not answer.abstained:
        context = {p.chunk.chunk_id for p in response.context}
        assert answer.citations and all(c.chunk_id in context for c in answer.citations)


def test_llamacpp_answer_cites_answer_units_it_was_supplied(llamacpp_gateway):
    """SmolLM2 reads numbered answer units and cites unit ids; what reaches the caller are the spans of units
    the generator put in its prompt (recomputed here from the context the gateway returned)."""
    question = "how much is the Team plan per month"
    response = llamacpp_gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=question), timeout=300)
    answer = response.answer
    assert not answer.abstained, answer.reason
    cfg = GeneratorConfig()
    passages = [convert.scored_from_pb(p) for p in response.context][: cfg.llm_passages]
    units = selection.candidates(question, passages)
    budget = 4 * cfg.section_token_budget * cfg.llm_passages  # the generator's own bound (LLMGenerator)
    supplied = {
        (passages[u.passage].chunk.chunk_id, passages[u.passage].chunk.char_start + u.start)
        for u in (units[i] for i in selection.shortlist(units, 8, budget))
    }
    context = {p.chunk.chunk_id: p.chunk for p in response.context}
    assert answer.citations
    for c in answer.citations:
        chunk = context[c.chunk_id]
        assert (c.char_start - chunk.char_start, c.char_end - chunk.char_start) in answer_units(chunk.body)
        assert (c.chunk_id, c.char_start) in supplied
        assert c.quote == chunk.body[c.char_start - chunk.char_start : c.char_end - chunk.char_start]


@pytest.mark.parametrize(
    "question",
    [
        "how much is the Team plan per month",
        "whats E-4412",
        "what is the parental leave policy",
    ],
)
def test_llm_answers_are_json_and_only_cite_the_context(llm_gateway, question):
    response = llm_gateway.Ask(gateway_pb2.AskRequest(tenant_id=TENANT, question=question), timeout=300)
    answer = response.answer
    assert answer.generator_id.startswith("openai:")
    # Schema-constrained decoding: the model's reply always parses.
    assert not answer.reason.startswith("unparseable_output"), answer.reason
    if not answer.abstained:
        context = {p.chunk.chunk_id for p in response.context}
        assert answer.citations and all(c.chunk_id in context for c in answer.citations)
        assert all(c.quote and c.char_end > c.char_start for c in answer.citations)
    else:
        assert answer.reason.split(":")[0] in {"not_in_context", "citation_validation_failed"}


def test_openai_backend_gets_schema_constrained_json_from_the_server(llama_server):
    """The official openai client against llama.cpp's OpenAI-compatible server: the model is discovered, and
    the reply is constrained to the answer schema in whichever structured-output form the server takes."""
    from services.generator.llm import JSON_OBJECT, JSON_SCHEMA, OpenAICompatibleBackend
    from services.generator.prompt import ANSWER_SCHEMA, parse_reply

    backend = OpenAICompatibleBackend(llama_server)
    backend.warm_up()
    assert backend.model_id.startswith("openai:") and backend.model_id.endswith(f"@{llama_server}")
    messages = [
        {"role": "system", "content": "Reply with JSON only."},
        {
            "role": "user",
            "content": "Evidence units:\n\n[U1] Pricing: The Team plan costs $79 per month.\n\nQuestion: "
            "how much is the Team plan?\nJSON answer:",
        },
    ]
    reply = parse_reply(backend.complete(messages, ANSWER_SCHEMA, 256))
    assert set(ANSWER_SCHEMA["required"]) <= set(reply) and isinstance(reply["citations"], list)
    # llama-cpp-python's server (0.3.36) validates response_format.type as text or json_object: the json_schema
    # probe was refused, so warm-up settled on its dialect.
    assert backend.dialect == JSON_OBJECT != JSON_SCHEMA


def test_openai_backend_names_an_unreachable_endpoint():
    from services.generator.llm import OpenAICompatibleBackend
    from shared.errors import FailedPrecondition, Unavailable

    backend = OpenAICompatibleBackend(f"http://127.0.0.1:{free_port()}", model="any", timeout=5)
    with pytest.raises(FailedPrecondition, match="not warmed up"):
        backend.complete([{"role": "user", "content": "hi"}], {"type": "object"}, 8)
    with pytest.raises(Unavailable, match="unreachable"):
        backend.warm_up()  # the structured-output probe finds nothing listening
