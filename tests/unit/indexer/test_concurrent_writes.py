"""Writes of one document take turns in the indexer: a delete that arrived while an upsert was embedding used
to remove the chunks the upsert had found stored and so not embedded, and the upsert then failed on an
internal KeyError. The embedder here only sleeps, to hold the race window open; the index is the real one."""

import threading
import time

import numpy as np

from services.indexer.service import DocumentIndexer
from shared.embedding.base import ModelSpec
from shared.index.embedded import EmbeddedIndex
from tests.conformance.index_suite import DIM, MODEL_ID, chunk, meta, unit, write


class _SlowEmbedder:
    spec = ModelSpec(model_id=MODEL_ID, dimension=DIM, max_tokens=512)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        time.sleep(0.5)
        return np.stack([unit(1, n + 1) for n in range(len(texts))])


def test_a_delete_during_an_upsert_of_the_document_waits_for_it(tmp_path):
    index = EmbeddedIndex(str(tmp_path / "index.sqlite"))
    index.warm_up()
    m = meta(doc="race")
    write(index, m, [("alpha", unit(1)), ("beta", unit(0, 1))])
    indexer = DocumentIndexer(index, _SlowEmbedder(), store_views=False)
    outcome: dict[str, object] = {}

    def upsert():  # alpha is stored, so only delta is embedded (slowly)
        try:
            outcome["upsert"] = indexer.upsert(m, [chunk(m, 0, "alpha"), chunk(m, 1, "delta")])
        except Exception as err:  # noqa: BLE001 - the test reports what the thread met
            outcome["upsert"] = err

    writer = threading.Thread(target=upsert)
    writer.start()
    time.sleep(0.15)  # the upsert is embedding now
    removed = indexer.delete("acme", "race")
    writer.join()
    assert not isinstance(outcome["upsert"], Exception), outcome["upsert"]
    assert (outcome["upsert"].written, outcome["upsert"].unchanged) == (1, 1)
    assert removed == 2  # the delete came after the whole upsert: alpha and delta
    assert index.stats("acme")["chunks"] == 0
