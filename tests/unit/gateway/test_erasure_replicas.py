"""Erasure's calls to the reranker's replicas (real gRPC servers on loopback): every replica is sent every batch
of chunk ids and reports as its own store; one that cannot be reached is reported unchecked, naming its address,
while the others are still cleared; when none answers, the batches stop."""

from concurrent import futures

import grpc
import pytest

from services.gateway.erasure import _FORGET_BATCH, Eraser
from shared.clients import StageClient
from shared.stubs import reranker_pb2, reranker_pb2_grpc


class _Cache(reranker_pb2_grpc.RerankerServicer):
    def __init__(self):
        self.batches: list[int] = []

    def ForgetChunks(self, request, context):
        self.batches.append(len(request.chunk_ids))
        return reranker_pb2.ForgetChunksResponse(removed=len(request.chunk_ids), remaining=0)


@pytest.fixture
def live_replica():
    cache = _Cache()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    reranker_pb2_grpc.add_RerankerServicer_to_server(cache, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield cache, f"127.0.0.1:{port}"
    server.stop(0)


def _dead_address() -> str:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=1))
    port = server.add_insecure_port("127.0.0.1:0")  # bound, never started: the port refuses
    return f"127.0.0.1:{port}"


class _CountingClient(StageClient):
    """A real stage client that counts its calls to every replica."""

    rounds = 0

    def call_each(self, method, request, context=None):
        self.rounds += 1
        return super().call_each(method, request, context)


def _forget(address: str, ids: list[str]):
    client = _CountingClient("reranker", address, reranker_pb2_grpc.RerankerStub, default_timeout=3)
    try:
        return Eraser(None, None, client, None, "")._forget_reranker(ids, None), client.rounds
    finally:
        client.close()


def test_every_replica_gets_every_batch_and_a_dead_one_is_named(live_replica):
    cache, live = live_replica
    dead = _dead_address()
    ids = [f"ch_{n}" for n in range(2 * _FORGET_BATCH + 1)]
    found, rounds = _forget(f"{live},{dead}", ids)
    checks = {c.location: c for c in found}
    assert rounds == 3
    assert cache.batches == [_FORGET_BATCH, _FORGET_BATCH, 1]
    assert checks[live].removed == len(ids) and checks[live].clean
    assert checks[dead].unchecked and not checks[dead].clean
    assert dead in checks[dead].note


def test_when_no_replica_answers_the_batches_stop():
    dead = _dead_address()
    (check,), rounds = _forget(dead, [f"ch_{n}" for n in range(3 * _FORGET_BATCH)])
    assert check.unchecked and "reranker unreachable" in check.note
    assert rounds == 1
