"""The int8 cross-encoder through the real reranker service: two reranker processes on loopback, one serving
the fp32 model and one its int8 quantisation (ONNX Runtime's dynamic quantiser, per-channel, MatMul only), are
given the same real first-stage candidates (the sample model's held-out tuning queries, as mined by
`make reranker`); the int8 model must rank them as the fp32 one does. No timing here: `make bench-rerank`."""

import os
import shutil

import numpy as np
import pytest
from scipy.stats import spearmanr

from services.cli.mesh import free_port
from services.reranker.cross_encoder import CARD_FILE
from services.reranker.training import quantize
from services.reranker.training.data import load_queries
from services.reranker.triton_server import rerankers_root
from shared import convert
from shared.model import Chunk, DocumentMeta, ScoredChunk, StageScores
from shared.stubs import reranker_pb2, reranker_pb2_grpc
from tests.support.mesh import TENANT, extra_stages

pytestmark = [pytest.mark.integration]

MODEL_DIR = rerankers_root() / "sample"
QUERIES = 4
CANDIDATES = 20


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    """A copy of the trained sample model with its int8 file made by the project's quantiser."""
    if not (MODEL_DIR / CARD_FILE).is_file():
        pytest.fail(f"no trained cross-encoder in {MODEL_DIR}: run `make reranker` (make test does)")
    folder = tmp_path_factory.mktemp("ce-int8") / "sample"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json", CARD_FILE, "mined-tune.jsonl"):
        shutil.copy2(MODEL_DIR / name, folder / name)
    quantize.quantize(folder, quantize.SHIPPED)
    return folder


def _service(model_dir, variant: str):
    port = free_port()
    env = {
        **os.environ,
        "RAGMESH_RERANKER_PORT": str(port),
        "RAGMESH_RERANKER_METRICS_PORT": "0",
        "RAGMESH_RERANKER_MODEL": "cross-encoder",
        "RAGMESH_RERANKER_CROSS_ENCODER": str(model_dir),
        "RAGMESH_RERANKER_CROSS_ENCODER_VARIANT": variant,
        "RAGMESH_RERANKER_CROSS_ENCODER_K": str(CANDIDATES),
    }
    return extra_stages(["reranker"], env, port, reranker_pb2_grpc.RerankerStub)


@pytest.fixture(scope="module")
def fp32(model_dir):
    with _service(model_dir, "fp32") as stub:
        yield stub


@pytest.fixture(scope="module")
def int8(model_dir):
    with _service(model_dir, quantize.SHIPPED.name) as stub:
        yield stub


def _request(query, candidates) -> reranker_pb2.RerankRequest:
    meta = DocumentMeta(document_id="doc", version="1", tenant_id=TENANT)
    chunks = [
        ScoredChunk(
            Chunk(f"c{i}", meta, [], c.text, c.text, 0, len(c.text), "", 0, i),
            StageScores(fused_rank=c.first_rank or i + 1),
        )
        for i, c in enumerate(candidates)
    ]
    return reranker_pb2.RerankRequest(
        query=query, candidates=[convert.scored_to_pb(c) for c in chunks], top_n=len(chunks)
    )


def _scores(stub, request) -> tuple[dict[str, float], reranker_pb2.RerankResponse]:
    response = stub.Rerank(request, timeout=120)
    return {c.chunk.chunk_id: c.scores.rerank_score for c in response.candidates}, response


def test_the_int8_model_ranks_real_candidates_as_the_fp32_model_does(model_dir, fp32, int8):
    queries = [q for q in load_queries(model_dir / "mined-tune.jsonl") if len(q.candidates) >= CANDIDATES][:QUERIES]
    assert len(queries) == QUERIES
    for q in queries:
        request = _request(q.text, q.candidates[:CANDIDATES])
        full, full_response = _scores(fp32, request)
        small, small_response = _scores(int8, request)
        # Both report the same model; the int8 one says it is the int8 variant at the trained window.
        assert small_response.model_id == full_response.model_id
        assert small_response.model_version == f"{full_response.model_version}+int8@{_window(model_dir)}"
        ids = sorted(full)
        a, b = np.array([full[i] for i in ids]), np.array([small[i] for i in ids])
        assert np.isfinite(b).all() and ((b > 0) & (b < 1)).all()  # probabilities of relevance
        rho = spearmanr(a, b).statistic
        assert rho > 0.9, (q.text, rho)
        # The fp32 model's top candidate stays near the top of the int8 model's order.
        assert sorted(ids, key=lambda i: -small[i]).index(max(ids, key=lambda i: full[i])) < 3


def _window(model_dir) -> int:
    import json

    return int(json.loads((model_dir / CARD_FILE).read_text())["max_length"])
