"""What a mesh on one machine sets for its stages that the stages' own defaults do not."""

import os

import pytest

from services.cli.mesh import (
    MAX_IN_FLIGHT_ENV,
    Mesh,
    MeshError,
    one_machine_in_flight,
    parse_replicas,
    replica_name,
    stage_of,
)


def test_the_gateway_in_flight_limit_is_two_per_cpu_unless_the_caller_sets_it(tmp_path, monkeypatch):
    monkeypatch.delenv(MAX_IN_FLIGHT_ENV, raising=False)
    assert Mesh(str(tmp_path)).env()[MAX_IN_FLIGHT_ENV] == str(2 * len(os.sched_getaffinity(0)))
    assert one_machine_in_flight() >= 2
    monkeypatch.setenv(MAX_IN_FLIGHT_ENV, "0")
    assert Mesh(str(tmp_path)).env()[MAX_IN_FLIGHT_ENV] == "0"
    assert Mesh(str(tmp_path), extra_env={MAX_IN_FLIGHT_ENV: "7"}).env()[MAX_IN_FLIGHT_ENV] == "7"


def test_a_replicated_stage_is_one_address_list_and_each_replica_has_its_own_ports(tmp_path):
    mesh = Mesh(str(tmp_path), replicas={"retriever": 3})
    assert mesh.stage_names(("retriever",)) == ["retriever", "retriever-2", "retriever-3"]
    assert mesh.start_order.index("retriever-3") < mesh.start_order.index("reranker")
    env = mesh.env()
    assert env["RAGMESH_RETRIEVER_ADDR"].split(",") == [mesh.address(n) for n in mesh.stage_names(("retriever",))]
    assert len({mesh.ports[n] for n in mesh.start_order}) == len(mesh.start_order)
    third = mesh.process_env("retriever-3")
    assert third["RAGMESH_RETRIEVER_PORT"] == str(mesh.ports["retriever-3"])
    assert third["RAGMESH_RETRIEVER_METRICS_PORT"] == str(mesh.metrics_ports["retriever-3"])
    assert mesh.process_env("retriever")["RAGMESH_RETRIEVER_PORT"] == str(mesh.ports["retriever"])
    assert env["RAGMESH_RERANKER_ADDR"] == mesh.address("reranker")  # one process: one address


def test_replica_names_map_back_to_their_stage():
    assert [stage_of(n) for n in ("retriever", "retriever-2", "http", "retriever-12")] == [
        "retriever",
        "retriever",
        "http",
        "retriever",
    ]
    assert replica_name("reranker", 1) == "reranker" and replica_name("reranker", 2) == "reranker-2"


@pytest.mark.parametrize(
    ("spec", "problem"),
    [("retriever", "STAGE=N"), ("retriever=0", "STAGE=N"), ("retriever=two", "STAGE=N"), ("indexer=2", "only")],
)
def test_replicas_are_refused_for_what_cannot_run_twice(spec, problem):
    with pytest.raises(MeshError, match=problem):
        parse_replicas([spec])


def test_replicas_are_parsed_per_stage():
    assert parse_replicas(["retriever=2", "reranker=3"]) == {"retriever": 2, "reranker": 3}
    assert parse_replicas([]) == {}
