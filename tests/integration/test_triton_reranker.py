"""The cross-encoder served by a real tritonserver (python backend), through the reranker service and
the whole mesh. The model is the sample corpus's self-supervised cross-encoder that `make reranker`
trains (cached in ~/.cache/ragmesh/rerankers/sample)."""

import os
import shutil

import grpc
import numpy as np
import pytest

from services.cli.mesh import Mesh, free_port
from services.reranker.cross_encoder import CARD_FILE, OnnxScorer, TritonScorer
from services.reranker.training.command import install_into_triton
from services.reranker.triton_server import TritonServer, rerankers_root
from shared import convert
from shared.model import Chunk, DocumentMeta, ScoredChunk, StageScores
from shared.stubs import gateway_pb2, gateway_pb2_grpc, reranker_pb2, reranker_pb2_grpc
from tests.support.mesh import EXAMPLES, TENANT, extra_stages, ingest_paths

pytestmark = [pytest.mark.integration, pytest.mark.slow]

MODEL_DIR = rerankers_root() / "sample"
# Sections of the same documents: the relevant one must beat its siblings, whose words overlap.
NEAR_MISSES = [
    (
        "what happens when two devices edit the same file offline",
        "E-4412 Sync conflict. Meaning: two clients changed the same file version at the same time. Cause: offline "
        "edits on two devices. Resolution: open the file history, keep the correct version, and run "
        "`nwctl sync resolve --keep local` or `--keep remote`.",
        [
            "E-4413 Sync paused by admin. Meaning: an administrator paused sync for the workspace, typically during a "
            "migration. Resolution: wait for the admin to resume sync; no data is lost.",
            "E-4421 Sync token invalid. Meaning: the sync client's cursor token is no longer accepted by the server. "
            "Cause: the client was offline for more than 30 days, or the workspace was restored from backup.",
            "E-4422 Sync quota throttled. Meaning: the sync service is throttling the client because it exceeded "
            "10,000 file changes per hour. Resolution: reduce the change rate or split the workload across folders.",
        ],
    ),
    (
        "how many days does a consumer have to cancel for a full refund",
        "Consumer returns. Timing. Consumers may cancel and receive a full refund within 14 days of the initial "
        "purchase or renewal date. After 14 days, no refund is given for the current billing period.",
        [
            "Consumer returns. Fees. Consumer refunds are issued without a processing fee when paid back to a card. "
            "Refunds to PayPal carry a flat $2 handling charge.",
            "Refunds. Eligibility. A customer may request a refund for any paid subscription or add-on. Usage-based "
            "charges are not refundable. Refund requests must be submitted through the billing portal.",
        ],
    ),
]


@pytest.fixture(scope="module")
def model_dir():
    if not (MODEL_DIR / CARD_FILE).is_file():
        pytest.fail(f"no trained cross-encoder in {MODEL_DIR}: run `make reranker` (make test does)")
    return MODEL_DIR


@pytest.fixture(scope="module")
def triton(model_dir, tmp_path_factory):
    server = TritonServer(
        model_dir / "triton",
        free_port(),
        free_port(),
        free_port(),
        log_path=tmp_path_factory.mktemp("triton") / "tritonserver.log",
    )
    server.start(timeout=180)
    yield server
    server.stop()


def _candidates(texts: list[str]) -> list[ScoredChunk]:
    meta = DocumentMeta(document_id="doc", version="1", tenant_id=TENANT)
    return [
        ScoredChunk(
            Chunk(
                chunk_id=f"c{i}",
                meta=meta,
                heading_path=[],
                body=t,
                embed_text=t,
                char_start=0,
                char_end=len(t),
                parent_section_id="",
                token_count=0,
                position=i,
            ),
            StageScores(fused_rank=i + 1, fused_score=1.0 / (61 + i)),
        )
        for i, t in enumerate(texts)
    ]


def test_triton_serves_the_same_scores_as_the_model_in_process(model_dir, triton):
    passages = [p for _, pos, negs in NEAR_MISSES for p in [pos, *negs]]
    served = TritonScorer(triton.grpc_address, timeout_s=30)
    served.warm_up()
    local = OnnxScorer(model_dir, variant="fp32")  # what Triton serves (the card's CPU variant is in-process)
    local.warm_up()
    card_id = local.model_id
    assert served.model_id == card_id and served.model_version == local.model_version
    a = served.score("refund window", passages)
    b = local.score("refund window", passages)
    np.testing.assert_allclose(a, b, atol=1e-4)
    # The exported model agrees with the trained torch checkpoint it came from.
    from services.reranker.training import loop

    torch_model = loop.load_cross_encoder(str(model_dir / "checkpoint"), local.max_length)
    np.testing.assert_allclose(loop.score_pairs(torch_model, "refund window", passages), b, atol=1e-3)


def test_a_query_longer_than_the_window_is_cut_not_rejected(model_dir, triton):
    passages = [NEAR_MISSES[0][1], *NEAR_MISSES[0][2]]
    long_query = " ".join([NEAR_MISSES[0][0]] * 120)  # far past the model's window on its own
    served = TritonScorer(triton.grpc_address, timeout_s=30)
    served.warm_up()
    local = OnnxScorer(model_dir, variant="fp32")  # what Triton serves (the card's CPU variant is in-process)
    local.warm_up()
    a = served.score(long_query, passages)
    assert a.shape == (len(passages),) and np.isfinite(a).all()
    np.testing.assert_allclose(a, local.score(long_query, passages), atol=1e-4)


@pytest.fixture(scope="module")
def reranker_service(triton, tmp_path_factory):
    port = free_port()
    env = {
        **os.environ,
        "RAGMESH_RERANKER_PORT": str(port),
        "RAGMESH_RERANKER_METRICS_PORT": "0",
        "RAGMESH_RERANKER_MODEL": "triton",
        "RAGMESH_RERANKER_TRITON_ADDRESS": triton.grpc_address,
    }
    with extra_stages(["reranker"], env, port, reranker_pb2_grpc.RerankerStub) as stub:
        yield stub


@pytest.mark.parametrize("query,relevant,near_misses", NEAR_MISSES)
def test_the_relevant_passage_is_ranked_above_near_misses(reranker_service, query, relevant, near_misses):
    # The relevant passage comes last from the first stage; only the cross-encoder can lift it.
    candidates = _candidates([*near_misses, relevant])
    response = reranker_service.Rerank(
        reranker_pb2.RerankRequest(
            query=query, candidates=[convert.scored_to_pb(c) for c in candidates], top_n=len(candidates)
        ),
        timeout=60,
    )
    assert response.model_id.startswith("ragmesh-ce/") and response.model_version
    scores = {c.chunk.body: c.scores.rerank_score for c in response.candidates}
    assert all(scores[relevant] > scores[n] for n in near_misses), scores


def _checkpoint_only(model_dir, folder):
    """The trained model as a GPU host may be given it: card, tokenizer and checkpoint, no model.onnx."""
    folder.mkdir()
    for name in (CARD_FILE, "tokenizer.json", "MODEL_CARD.md"):
        shutil.copy2(model_dir / name, folder / name)
    shutil.copytree(model_dir / "checkpoint", folder / "checkpoint")
    return folder


def test_a_checkpoint_only_repository_needs_the_checkpoint_flag(model_dir, tmp_path):
    trained = _checkpoint_only(model_dir, tmp_path / "trained")
    with pytest.raises(FileNotFoundError, match="no model.onnx"):
        install_into_triton(trained, tmp_path / "repository")
    served = install_into_triton(trained, tmp_path / "repository", with_torch=True) / "1"
    assert (served / "hf" / "config.json").is_file() and not (served / "model.onnx").exists()


def test_a_checkpoint_only_repository_refuses_an_instance_without_cuda(model_dir, tmp_path):
    # This host has no GPU: the checkpoint's torch path is not taken, and there is no ONNX model to fall back on.
    trained = _checkpoint_only(model_dir, tmp_path / "trained")
    repository = install_into_triton(trained, tmp_path / "repository", with_torch=True).parent
    server = TritonServer(repository, free_port(), free_port(), free_port(), log_path=tmp_path / "tritonserver.log")
    with pytest.raises(RuntimeError, match="tritonserver exited"):
        server.start(timeout=120)
    assert "holds only the checkpoint (hf/), which runs with torch on a GPU" in server.log_path.read_text()


def test_an_unreachable_triton_is_unavailable_with_its_address(tmp_path):
    port, dead = free_port(), f"127.0.0.1:{free_port()}"
    env = {
        **os.environ,
        "RAGMESH_RERANKER_PORT": str(port),
        "RAGMESH_RERANKER_METRICS_PORT": "0",
        "RAGMESH_RERANKER_MODEL": "triton",
        "RAGMESH_RERANKER_TRITON_ADDRESS": dead,
        "RAGMESH_RERANKER_TRITON_TIMEOUT_S": "2",
    }
    with extra_stages(["reranker"], env, port, reranker_pb2_grpc.RerankerStub) as stub:
        with pytest.raises(grpc.RpcError) as err:
            stub.Rerank(
                reranker_pb2.RerankRequest(
                    query="q", candidates=[convert.scored_to_pb(c) for c in _candidates(["a passage"])]
                ),
                timeout=30,
            )
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert dead in err.value.details()


def test_ask_is_reranked_by_triton_and_degrades_when_triton_stops(model_dir, tmp_path_factory):
    server = TritonServer(
        model_dir / "triton",
        free_port(),
        free_port(),
        free_port(),
        log_path=tmp_path_factory.mktemp("triton-mesh") / "tritonserver.log",
    ).start(180)
    # The service's default Triton deadline: a first, cold inference on two busy cores can take seconds.
    env = {
        "RAGMESH_RERANKER_MODEL": "triton",
        "RAGMESH_RERANKER_TRITON_ADDRESS": server.grpc_address,
        "RAGMESH_GATEWAY_CALIBRATION_FILE": "none",
    }
    try:
        with Mesh.on_free_ports(str(tmp_path_factory.mktemp("mesh-triton")), extra_env=env) as mesh:
            with mesh.gateway_channel() as channel:
                gateway = gateway_pb2_grpc.GatewayStub(channel)
                assert all(r.ok for r in ingest_paths(gateway, TENANT, [EXAMPLES]))
                question = gateway_pb2.AskRequest(tenant_id=TENANT, question="whats E-4412")
                served = gateway.Ask(question, timeout=120)
                assert served.reranker_model_id.startswith("ragmesh-ce/") and not served.degraded
                server.stop()
                degraded = gateway.Ask(question, timeout=120)
                assert degraded.degraded and "reranker" in degraded.degraded_reason
                assert degraded.answer.text or degraded.answer.abstained
    finally:
        server.stop()
