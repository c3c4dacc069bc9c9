"""The front door's settings (RAGMESH_HTTP_*, declared with the others in shared/config.py) and where the
gateway is (RAGMESH_GATEWAY_ADDR)."""

from shared import config
from shared.config import HttpConfig


def load_config() -> tuple[HttpConfig, str]:
    """The settings and the gateway's address; an unknown or invalid RAGMESH_* variable stops start-up."""
    return config.load(HttpConfig, "http"), config.stage_address("gateway")
