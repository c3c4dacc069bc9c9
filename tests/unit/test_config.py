import dataclasses

import pytest

from shared import config


@dataclasses.dataclass(frozen=True)
class Sample(config.ServerConfig):
    port: int = 1234
    threshold: float = 0.5
    enabled: bool = False
    model: str = "m"


def test_stage_prefix_beats_mesh_wide_value_beats_default():
    env = {
        "RAGMESH_SAMPLE_THRESHOLD": "0.25",
        "RAGMESH_THRESHOLD": "0.9",
        "RAGMESH_MODEL": "x",
        "RAGMESH_SAMPLE_ENABLED": "true",
    }
    cfg = config.load(Sample, "sample", env)
    assert (cfg.threshold, cfg.model, cfg.enabled, cfg.port) == (0.25, "x", True, 1234)


def test_bad_values_name_the_variable():
    with pytest.raises(ValueError, match="RAGMESH_SAMPLE_PORT"):
        config.load(Sample, "sample", {"RAGMESH_SAMPLE_PORT": "eighty"})


def test_servers_bind_loopback_by_default():
    assert config.ServerConfig().host == "127.0.0.1"
    assert config.stage_address("retriever", {}) == "127.0.0.1:7073"
