"""What a mesh on one machine sets for its stages that the stages' own defaults do not."""

import os

from services.cli.mesh import MAX_IN_FLIGHT_ENV, Mesh, one_machine_in_flight


def test_the_gateway_in_flight_limit_is_two_per_cpu_unless_the_caller_sets_it(tmp_path, monkeypatch):
    monkeypatch.delenv(MAX_IN_FLIGHT_ENV, raising=False)
    assert Mesh(str(tmp_path)).env()[MAX_IN_FLIGHT_ENV] == str(2 * len(os.sched_getaffinity(0)))
    assert one_machine_in_flight() >= 2
    monkeypatch.setenv(MAX_IN_FLIGHT_ENV, "0")
    assert Mesh(str(tmp_path)).env()[MAX_IN_FLIGHT_ENV] == "0"
    assert Mesh(str(tmp_path), extra_env={MAX_IN_FLIGHT_ENV: "7"}).env()[MAX_IN_FLIGHT_ENV] == "7"
