"""The client's per-document ingest deadline, as logic: which results come back, and what is sent again.
(The real mesh case, a slow document among fast ones, is tests/integration/test_mesh.py.)"""

import grpc
import pytest

from ragmesh.client.ingest import SECONDS_PER_KIB, ingest_per_document
from ragmesh.v1 import common_pb2, gateway_pb2


class _Ended(grpc.RpcError):
    def __init__(self, code: grpc.StatusCode):
        self._code = code

    def code(self) -> grpc.StatusCode:
        return self._code


def _docs(*names: str) -> list[common_pb2.SourceDocument]:
    return [common_pb2.SourceDocument(meta=common_pb2.DocumentMeta(source_uri=n), content=b"x") for n in names]


def _gateway(answers_before_end: list[int], end: grpc.StatusCode = grpc.StatusCode.DEADLINE_EXCEEDED):
    """A send() whose n-th call answers that many documents, then ends with `end` unless it answered all."""
    calls: list[tuple[list[str], float]] = []

    def send(docs, seconds):
        calls.append(([d.meta.source_uri for d in docs], seconds))
        answered = answers_before_end[len(calls) - 1]
        for doc in docs[:answered]:
            yield gateway_pb2.IngestResult(source_uri=doc.meta.source_uri, ok=True)
        if answered < len(docs):
            raise _Ended(end)

    return send, calls


def test_the_document_past_the_deadline_fails_alone_and_the_rest_go_again():
    send, calls = _gateway([1, 2])
    results = list(ingest_per_document(send, _docs("a", "b", "c", "d"), 10))
    assert [(r.source_uri, r.ok, r.error_code) for r in results] == [
        ("a", True, ""),
        ("b", False, "DEADLINE_EXCEEDED"),
        ("c", True, ""),
        ("d", True, ""),
    ]
    assert "10 s per document" in results[1].error
    # Each call: 10 s for each document it carries (and a little for its one byte).
    assert [names for names, _ in calls] == [["a", "b", "c", "d"], ["c", "d"]]
    assert [round(seconds, 2) for _, seconds in calls] == [40, 20]


def test_a_large_document_gets_more_time_than_a_small_one():
    """A 1.8 MB manual took 281 s to embed on two cores: a flat deadline per document failed it."""
    send, calls = _gateway([2])
    big = common_pb2.SourceDocument(meta=common_pb2.DocumentMeta(source_uri="manual.md"), content=b"w " * 900_000)
    assert [r.ok for r in ingest_per_document(send, [*_docs("a"), big], 120)] == [True, True]
    ((_, seconds),) = calls
    assert seconds == pytest.approx(120 + 120 + SECONDS_PER_KIB * 1_800_001 / 1024)
    assert seconds - 240 > 281 * 1.5


def test_a_deadline_after_every_answer_loses_nothing_and_sends_nothing_again():
    calls = []

    def send(docs, seconds):
        calls.append(len(docs))
        for doc in docs:
            yield gateway_pb2.IngestResult(source_uri=doc.meta.source_uri, ok=True)
        raise _Ended(grpc.StatusCode.DEADLINE_EXCEEDED)  # the stream's end came after the deadline

    assert [r.ok for r in ingest_per_document(send, _docs("a", "b"), 5)] == [True, True] and calls == [2]


def test_other_errors_are_raised_as_before():
    send, _ = _gateway([1], end=grpc.StatusCode.UNAUTHENTICATED)
    with pytest.raises(grpc.RpcError):
        list(ingest_per_document(send, _docs("a", "b"), 5))
