"""Typed service configuration read from `RAGMESH_<STAGE>_*` environment variables.

Each service declares one frozen dataclass; `load(cls, stage)` fills it from the environment, falling
back to mesh-wide `RAGMESH_*` values and then to the defaults, with types taken from the annotations.
"""

import dataclasses
import os
from typing import TypeVar, get_type_hints

T = TypeVar("T")

STAGES = ("gateway", "chunker", "indexer", "retriever", "reranker", "generator")
DEFAULT_PORTS = {stage: 7070 + i for i, stage in enumerate(STAGES)}
DEFAULT_METRICS_PORTS = {stage: 9470 + i for i, stage in enumerate(STAGES)}
# Chosen on the SciFact dev portion (README "Embedders"): hybrid nDCG@10 0.786 vs e5-small-v2 0.778 and
# all-MiniLM-L6-v2 0.748. `make models` caches its ONNX export.
DEFAULT_EMBED_MODEL = "BAAI/bge-small-en-v1.5"


def _parse(raw: str, kind: type, name: str):
    if kind is bool:
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{name}={raw!r} is not a boolean")
    try:
        return kind(raw)
    except ValueError as exc:
        raise ValueError(f"{name}={raw!r} is not a valid {kind.__name__}") from exc


def load(cls: type[T], stage: str, env: dict | None = None) -> T:
    env = os.environ if env is None else env
    hints = get_type_hints(cls)
    values = {}
    for field in dataclasses.fields(cls):
        for name in (f"RAGMESH_{stage.upper()}_{field.name.upper()}", f"RAGMESH_{field.name.upper()}"):
            if name in env:
                values[field.name] = _parse(env[name], hints[field.name], name)
                break
    return cls(**values)


def stage_address(stage: str, env: dict | None = None) -> str:
    """Where a stage listens, as its callers see it."""
    env = os.environ if env is None else env
    return env.get(f"RAGMESH_{stage.upper()}_ADDR", f"127.0.0.1:{DEFAULT_PORTS[stage]}")


@dataclasses.dataclass(frozen=True)
class ServerConfig:
    """What every stage's server needs; stage configs embed these fields by inheritance."""

    host: str = "127.0.0.1"
    port: int = 0
    # Prometheus /metrics; 0 disables it.
    metrics_port: int = 0
    max_workers: int = 8
    grace_seconds: float = 10.0
    log_level: str = "INFO"
    # Mutual TLS for the stages behind the gateway (shared/tls.py); "" = plaintext on loopback.
    tls_dir: str = ""
