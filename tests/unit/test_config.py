import re
from pathlib import Path

import pytest

from services.cli.mesh import Mesh
from shared import config

ROOT = Path(__file__).resolve().parents[2]


def load(cls, env):
    return config.load(cls, "test", env)


def test_a_stage_reads_its_own_prefix_and_defaults():
    env = {"RAGMESH_GATEWAY_ABSTAIN_THRESHOLD": "0.25", "RAGMESH_GATEWAY_AUTH_DISABLED": "true"}
    cfg = load(config.GatewayConfig, env)
    assert (cfg.abstain_threshold, cfg.auth_disabled, cfg.port, cfg.candidates) == (0.25, True, 7070, 50)
    assert load(config.RetrieverConfig, env).port == 7073


def test_max_tokens_no_longer_sets_both_the_chunk_budget_and_the_llm_output_cap():
    # It used to be the fallback of both RAGMESH_CHUNKER_MAX_TOKENS and RAGMESH_GENERATOR_MAX_TOKENS.
    for cls in (config.ChunkerConfig, config.GeneratorConfig):
        with pytest.raises(SystemExit) as stopped:
            load(cls, {"RAGMESH_MAX_TOKENS": "77"})
        assert "RAGMESH_MAX_TOKENS is not a ragmesh setting" in str(stopped.value)
        assert "did you mean RAGMESH_CHUNKER_MAX_TOKENS or RAGMESH_GENERATOR_MAX_TOKENS?" in str(stopped.value)
    env = {"RAGMESH_CHUNKER_MAX_TOKENS": "77"}
    assert load(config.ChunkerConfig, env).max_tokens == 77
    assert load(config.GeneratorConfig, env).max_tokens == 256


def test_one_port_variable_no_longer_gives_every_stage_the_same_port():
    with pytest.raises(SystemExit, match="RAGMESH_PORT is not a ragmesh setting; did you mean RAGMESH_CHUNKER_PORT"):
        load(config.GatewayConfig, {"RAGMESH_PORT": "9000"})


def test_a_misspelled_variable_names_the_closest_known_one():
    with pytest.raises(SystemExit, match=r"did you mean RAGMESH_GENERATOR_MAX_TOKENS\?"):
        load(config.GeneratorConfig, {"RAGMESH_GENERATOR_MAX_TOKEN": "300"})
    assert config.unknown_variables({"RAGMESH_DATADIR": "x", "RAGMESH_NOTHING_LIKE_IT": "1", "HOME": "/"}) == {
        "RAGMESH_DATADIR": ["RAGMESH_DATA_DIR"],
        "RAGMESH_NOTHING_LIKE_IT": [],
    }


def test_mesh_wide_settings_are_one_value_for_every_stage():
    env = {"RAGMESH_DATA_DIR": "/srv/ragmesh", "RAGMESH_INDEX": "opensearch", "RAGMESH_LOG_LEVEL": "DEBUG"}
    for cls in config.STAGE_SETTINGS.values():
        cfg = load(cls, env)
        assert (cfg.data_dir, cfg.index, cfg.log_level) == ("/srv/ragmesh", "opensearch", "DEBUG")
    # ... and a stage cannot have its own: that would split the mesh.
    with pytest.raises(SystemExit, match="RAGMESH_INDEXER_DATA_DIR is not a ragmesh setting"):
        load(config.IndexerConfig, {"RAGMESH_INDEXER_DATA_DIR": "/elsewhere"})


def test_another_stages_variables_are_not_rejected():
    """Every process sees the launcher's variables for all stages, and tests' and deployments' too."""
    env = {
        "RAGMESH_GATEWAY_RATE_LIMIT_BURST": "5",
        "RAGMESH_RERANKER_TRITON_TIMEOUT_S": "2",
        "RAGMESH_HTTP_PORT": "8081",
        "RAGMESH_RETRIEVER_ADDR": "10.0.0.2:7073",
        "RAGMESH_API_KEY": "secret",
    }
    assert load(config.ChunkerConfig, env).port == 7071


def test_the_mesh_launchers_environment_is_known():
    mesh = Mesh.on_free_ports("/tmp/ragmesh-config-test")
    ours = {name: value for name, value in mesh.env().items() if name.startswith("RAGMESH_")}
    assert len(ours) >= 4 * len(config.STAGES)
    config.check_environment(ours)


def test_bad_values_name_the_variable():
    with pytest.raises(SystemExit, match="RAGMESH_RETRIEVER_PORT='eighty'"):
        load(config.RetrieverConfig, {"RAGMESH_RETRIEVER_PORT": "eighty"})
    with pytest.raises(config.ConfigError, match="RAGMESH_OPENSEARCH_SHARDS='0'"):
        config.mesh({"RAGMESH_OPENSEARCH_SHARDS": "0"})


def test_servers_bind_loopback_by_default():
    assert load(config.ChunkerConfig, {}).host == "127.0.0.1"
    assert config.stage_address("retriever", {}) == "127.0.0.1:7073"
    assert config.stage_address("retriever", {"RAGMESH_RETRIEVER_ADDR": "10.0.0.2:7073"}) == "10.0.0.2:7073"


def test_stage_timeouts_are_the_gateways_settings():
    assert config.DEFAULT_STAGE_TIMEOUTS == {
        "chunker": 60.0,
        "indexer": 600.0,
        "retriever": 30.0,
        "reranker": 30.0,
        "generator": 120.0,
    }
    env = {"RAGMESH_GATEWAY_CHUNKER_TIMEOUT_SECONDS": "5"}
    assert load(config.GatewayConfig, env).stage_timeouts()["chunker"] == 5.0


def test_every_settings_model_is_known_and_every_setting_documented():
    models = {
        value
        for value in vars(config).values()
        if isinstance(value, type) and issubclass(value, config.Settings) and value.__module__ == config.__name__
    }
    assert models - {config.Settings, config.ServerConfig} == set(config.ALL_SETTINGS)
    for model in config.ALL_SETTINGS:
        for name, field in model.model_fields.items():
            assert field.description, f"{model.__name__}.{name}: add a docstring under the field (README's table)"


# Files that name variables which are deliberately not settings (to show them refused), and the README's example.
_DELIBERATELY_UNKNOWN = {"tests/unit/test_config.py", "tests/integration/test_config_startup.py"}
_EXAMPLES = {"RAGMESH_GENERATOR_MAX_TOKEN"}


def test_every_variable_the_repository_uses_is_a_setting():
    """Code, tests, deployment files, the Makefile and the README name only declared variables."""
    known = config.known_variables()
    used: dict[str, set[str]] = {}
    paths = [ROOT / "Makefile", ROOT / "README.md"]
    for folder in ("services", "shared", "tests", "loadtest", "deploy", "clients", "eval", "examples"):
        paths += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in (".py", ".sh", ".yaml", ".yml", ".tpl", ".md")
        ]
    for path in paths:
        relative = str(path.relative_to(ROOT))
        if relative in _DELIBERATELY_UNKNOWN or "/.venv" in relative:
            continue
        # A name ending in "_" is a prefix (RAGMESH_<STAGE>_PORT, RAGMESH_HTTP_*), not a variable.
        for name in re.findall(r"\bRAGMESH_[A-Z0-9_]*[A-Z0-9]\b(?![<*{$])", path.read_text(errors="replace")):
            if name not in known and name not in _EXAMPLES:
                used.setdefault(name, set()).add(relative)
    assert used == {}
