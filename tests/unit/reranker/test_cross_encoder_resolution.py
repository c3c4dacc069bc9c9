"""Which cross-encoder the reranker loads, in the documented order, and what its card says."""

import json

import pytest

from services.reranker.cross_encoder import CARD_FILE, HubScorer, OnnxScorer, resolve_scorer


def _card(folder, enabled=True, weight=1.5, **fusion):
    folder.mkdir(parents=True)
    (folder / CARD_FILE).write_text(
        json.dumps(
            {
                "model_id": f"ragmesh-ce/{folder.name}",
                "model_version": "abc",
                "max_length": 128,
                "enabled": enabled,
                "fusion": {"k": 60, "weight": weight, **fusion},
            }
        )
    )
    return folder


def test_an_explicit_folder_wins(tmp_path):
    explicit = _card(tmp_path / "mine")
    _card(tmp_path / "cache" / "sample")
    scorer = resolve_scorer(str(explicit), tmp_path / "cache")
    assert isinstance(scorer, OnnxScorer) and scorer.model_id == "ragmesh-ce/mine" and scorer.weight == 1.5


def test_a_name_in_the_cache_is_next(tmp_path):
    _card(tmp_path / "cache" / "sample")
    scorer = resolve_scorer("sample", tmp_path / "cache")
    assert isinstance(scorer, OnnxScorer) and scorer.model_id == "ragmesh-ce/sample"


def test_a_hub_name_is_last(tmp_path):
    assert isinstance(resolve_scorer("cross-encoder/ms-marco-MiniLM-L6-v2", tmp_path), HubScorer)


def test_nothing_to_load_is_none(tmp_path):
    assert resolve_scorer("sample", tmp_path) is None


@pytest.mark.parametrize("enabled,expected", [(True, 1.5), (False, 0.0)])
def test_a_model_without_a_tuning_gain_keeps_the_first_stage_order(tmp_path, enabled, expected):
    # enabled=False: no gain on the tuning split, so its fusion weight is 0 (the fused order stands).
    assert OnnxScorer(_card(tmp_path / "m", enabled=enabled)).weight == expected


def test_a_cached_triton_repository_serves_this_checkouts_model_code(tmp_path):
    from services.reranker.triton_server import MODEL_TEMPLATE, TritonServer

    version = tmp_path / "cross_encoder" / "1"
    version.mkdir(parents=True)
    (version / "model.py").write_text("# installed by an older checkout\n")
    TritonServer(tmp_path).refresh_model_code()
    assert (version / "model.py").read_bytes() == (MODEL_TEMPLATE / "cross_encoder" / "1" / "model.py").read_bytes()


@pytest.mark.parametrize("enabled,expected", [(True, 1.0), (False, 0.0)])
def test_the_maxsim_weight_comes_from_the_card_of_an_enabled_model(tmp_path, enabled, expected):
    assert OnnxScorer(_card(tmp_path / "m", enabled=enabled, maxsim_weight=1.0)).maxsim_weight == expected


def test_a_model_that_fuses_maxsim_refuses_to_run_without_an_embedder(tmp_path):
    from services.reranker.cross_encoder import CrossEncoderReranker
    from shared.errors import Unavailable

    reranker = CrossEncoderReranker(OnnxScorer(_card(tmp_path / "m", maxsim_weight=1.0)), maxsim_factory=None)
    assert reranker.model_id == "ragmesh-ce/m+maxsim"
    with pytest.raises(Unavailable, match="no embedder"):
        reranker._maxsim_ranker()


def test_the_servers_runtime_is_what_the_model_logged_last(tmp_path):
    from services.reranker.triton_server import TritonServer

    log = tmp_path / "tritonserver.log"
    server = TritonServer(tmp_path, log_path=log)
    assert server.runtime() == "unknown"  # no log yet
    log.write_text(
        'I1204 18:27:13 python_be.cc:2249] "TRITONBACKEND_ModelInstanceInitialize: cross_encoder_0_0 (GPU device 0)"\n'
        'I1204 18:31:02 model.py:49] "cross_encoder: ragmesh-ce/sample b530f8b228f0 on torch fp16 on cuda, '
        'max_length 96"\n'
    )
    assert server.runtime() == "torch fp16 on cuda"
