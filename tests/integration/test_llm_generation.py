"""Real LLM generation: SmolLM2 (GGUF) behind llama.cpp's OpenAI-compatible server on loopback,
called by a real generator process, answers checked by a real gateway process."""

import subprocess
import sys
import time
import urllib.request

import pytest

from services.cli.mesh import free_port
from services.generator.llm import _packaged_gguf
from shared.stubs import gateway_pb2
from tests.integration.conftest import TENANT, extra_stages

pytestmark = pytest.mark.integration


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
        [sys.executable, "-m", "llama_cpp.server", "--model", _packaged_gguf(), "--host", "127.0.0.1",
         "--port", str(port), "--n_threads", "2", "--n_ctx", "4096", "--seed", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
    env.update({
        "RAGMESH_GENERATOR_PORT": str(generator_port), "RAGMESH_GENERATOR_METRICS_PORT": "0",
        "RAGMESH_GENERATOR_ADDR": f"127.0.0.1:{generator_port}", "RAGMESH_GENERATOR_BACKEND": "openai",
        "RAGMESH_GENERATOR_OPENAI_URL": llama_server,
        "RAGMESH_GATEWAY_PORT": str(gateway_port), "RAGMESH_GATEWAY_METRICS_PORT": "0",
        # The gate is off so that every question reaches the model: this tests the citation checks.
        "RAGMESH_GATEWAY_ABSTAIN_THRESHOLD": "-1000", "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
        "RAGMESH_DATA_DIR": str(tmp_path_factory.mktemp("llm-gateway")),
    })
    with extra_stages(["generator", "gateway"], env, gateway_port) as gateway:
        yield gateway


@pytest.mark.parametrize("question", [
    "how much is the Team plan per month",
    "whats E-4412",
    "what is the parental leave policy",
])
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
