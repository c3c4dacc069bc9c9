"""When the gateway's own limit on a stage's calls ends one, the error says which setting to raise: a longer
client deadline would not help (a 2 MB document's indexing ran into the indexer's 600 s limit that way)."""

import time
from concurrent import futures

import grpc
import pytest

from services.gateway.funnel import Funnel
from shared.calibration import AnswerDecision
from shared.clients import StageCallError, StageClient
from shared.config import STAGES

METHOD = "/test.Slow/Call"


class _SlowStub:
    def __init__(self, channel: grpc.Channel):
        self.Call = channel.unary_unary(METHOD, request_serializer=bytes, response_deserializer=bytes)


@pytest.fixture
def slow_stage():
    """A real gRPC server on loopback whose one method answers after 0.5 s."""

    def call(request, context):
        time.sleep(0.5)
        return request

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handler = grpc.method_handlers_generic_handler("test.Slow", {"Call": grpc.unary_unary_rpc_method_handler(call)})
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(0)


def test_the_gateway_limit_names_its_setting(slow_stage):
    client = StageClient("indexer", slow_stage, _SlowStub, default_timeout=0.1)
    with pytest.raises(StageCallError) as err:
        client.call("Call", b"x")
    assert err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "0.1 s limit" in err.value.message and "RAGMESH_GATEWAY_INDEXER_TIMEOUT_SECONDS" in err.value.message
    assert "RAGMESH_GATEWAY_INDEXER_SECONDS_PER_CHUNK" in err.value.message
    client.close()


def test_a_call_may_be_given_a_longer_limit_than_the_stages(slow_stage):
    client = StageClient("indexer", slow_stage, _SlowStub, default_timeout=0.1)
    assert client.call("Call", b"x", cap=5.0) == b"x"
    with pytest.raises(StageCallError) as err:
        client.call("Call", b"x", cap=0.2)
    assert "0.2 s limit" in err.value.message
    client.close()


def test_a_long_documents_indexing_limit_grows_with_its_chunks():
    """A 1 MB document of 757 chunks took 245 s to index here; ~2,500 chunks ran past a fixed 600 s."""
    funnel = Funnel({stage: "127.0.0.1:9" for stage in STAGES if stage != "gateway"}, AnswerDecision(0.35))
    assert funnel.indexing_cap(10) == 600.0
    assert funnel.indexing_cap(2500) == 2500.0
    slower = Funnel(
        {stage: "127.0.0.1:9" for stage in STAGES if stage != "gateway"},
        AnswerDecision(0.35),
        timeouts={"indexer": 60.0},
        indexer_seconds_per_chunk=0.5,
    )
    assert (slower.indexing_cap(100), slower.indexing_cap(1000)) == (60.0, 500.0)


class _Caller:
    """The caller's own deadline, shorter than the gateway's limit."""

    def time_remaining(self) -> float:
        return 0.1


def test_the_callers_deadline_is_not_blamed_on_the_setting(slow_stage):
    client = StageClient("indexer", slow_stage, _SlowStub, default_timeout=30)
    with pytest.raises(StageCallError) as err:
        client.call("Call", b"x", context=_Caller())
    assert err.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert "TIMEOUT_SECONDS" not in err.value.message
    client.close()
