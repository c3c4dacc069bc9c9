"""The retriever's gRPC face rejects a retrieval mode it does not know instead of treating it as hybrid."""

import pytest

from services.retriever.server import RetrieverServicer
from shared.errors import InvalidArgument
from shared.stubs import retriever_pb2


class _Recorder:
    model_id = "m"

    class index:  # noqa: N801 - stands in for the index attribute
        name = "fake"

    def __init__(self):
        self.modes = []

    def run(self, tenant_id, query, filters, mode, top_k):
        self.modes.append(mode)
        return []

    def search(self, tenant_id, query, filters, mode, top_k):  # what the servicer calls: candidates, query vector
        return self.run(tenant_id, query, filters, mode, top_k), None


@pytest.mark.parametrize("number, mode", [(0, "hybrid"), (1, "hybrid"), (2, "bm25"), (3, "dense")])
def test_known_modes(number, mode):
    recorder = _Recorder()
    RetrieverServicer(recorder).Retrieve(retriever_pb2.RetrieveRequest(tenant_id="t", query="q", mode=number), None)
    assert recorder.modes == [mode]


@pytest.mark.parametrize("number", [4, 7, -1])
def test_an_unknown_mode_is_invalid_argument(number):
    recorder = _Recorder()
    with pytest.raises(InvalidArgument, match="mode: .*not a retrieval mode"):
        RetrieverServicer(recorder).Retrieve(retriever_pb2.RetrieveRequest(tenant_id="t", query="q", mode=number), None)
    assert recorder.modes == []
