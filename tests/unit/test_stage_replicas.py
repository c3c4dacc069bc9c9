"""A stage's address may name several replicas: the forms it takes, and a call every replica must receive
(`StageClient.call_each`, erasure's Forget) against real gRPC servers on loopback."""

from concurrent import futures

import grpc
import pytest

from shared.clients import StageClient, channel_target, replica_addresses
from shared.server import connection_age_options

METHOD = "/test.Echo/Call"


class _EchoStub:
    def __init__(self, channel: grpc.Channel):
        self.Call = channel.unary_unary(METHOD, request_serializer=bytes, response_deserializer=bytes)


def _server(answer: bytes) -> tuple[grpc.Server, str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handler = grpc.unary_unary_rpc_method_handler(lambda request, context: answer)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("test.Echo", {"Call": handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


@pytest.fixture
def two_replicas():
    servers = [_server(b"first"), _server(b"second")]
    yield [address for _, address in servers]
    for server, _ in servers:
        server.stop(0)


def test_an_address_list_is_an_ipv4_target_checked_under_its_first_host():
    assert channel_target("127.0.0.1:1,127.0.0.1:2") == ("ipv4:127.0.0.1:1,127.0.0.1:2", "127.0.0.1")
    assert channel_target("ragmesh-retriever:50053") == ("ragmesh-retriever:50053", None)
    assert channel_target("dns:///ragmesh-retriever:50053") == ("dns:///ragmesh-retriever:50053", None)


@pytest.mark.parametrize("address", ["localhost:1,localhost:2", "127.0.0.1:1,127.0.0.1", "127.0.0.1:1,:2"])
def test_a_list_names_replicas_by_ipv4_address_and_port(address):
    with pytest.raises(ValueError, match="RAGMESH_RETRIEVER_ADDR"):
        channel_target(address, "RAGMESH_RETRIEVER_ADDR")


def test_replica_addresses_are_the_list_or_what_a_dns_name_resolves_to():
    assert replica_addresses("127.0.0.1:1, 127.0.0.1:2") == ["127.0.0.1:1", "127.0.0.1:2"]
    assert replica_addresses("localhost:7072") == ["localhost:7072"]  # one server, however it resolves
    assert "127.0.0.1:7072" in replica_addresses("dns:///localhost:7072")


def test_calls_go_round_robin_and_call_each_reaches_every_replica(two_replicas):
    client = StageClient("retriever", ",".join(two_replicas), _EchoStub, default_timeout=5)
    try:
        answers = {client.call("Call", b"") for _ in range(6)}
        assert answers == {b"first", b"second"}
        replies = client.call_each("Call", b"")
        assert [(r.address, r.reply, r.error) for r in replies] == [
            (two_replicas[0], b"first", None),
            (two_replicas[1], b"second", None),
        ]
    finally:
        client.close()


def test_call_each_reports_a_replica_that_is_down_and_still_calls_the_others(two_replicas):
    down = _server(b"gone")
    down[0].stop(0)
    client = StageClient("retriever", ",".join([down[1], *two_replicas]), _EchoStub, default_timeout=2)
    try:
        replies = client.call_each("Call", b"")
    finally:
        client.close()
    assert [r.address for r in replies] == [down[1], *two_replicas]
    assert replies[0].error is not None and down[1] in replies[0].error.message
    assert replies[0].error.code == grpc.StatusCode.UNAVAILABLE
    assert [r.reply for r in replies[1:]] == [b"first", b"second"]


def test_a_dns_target_is_balanced_over_what_the_name_resolves_to(two_replicas):
    port = two_replicas[0].rpartition(":")[2]
    client = StageClient("retriever", f"dns:///localhost:{port}", _EchoStub, default_timeout=5)
    try:
        assert client.call("Call", b"") == b"first"  # whichever of localhost's addresses the server is bound on
        reached = [r for r in client.call_each("Call", b"") if r.error is None]
    finally:
        client.close()
    assert [(r.address, r.reply) for r in reached] == [(two_replicas[0], b"first")]


def test_a_server_closes_connections_after_their_age_only_when_asked():
    assert connection_age_options(0, 10) == []
    assert dict(connection_age_options(300, 10)) == {
        "grpc.max_connection_age_ms": 300_000,
        "grpc.max_connection_age_grace_ms": 10_000,
    }
