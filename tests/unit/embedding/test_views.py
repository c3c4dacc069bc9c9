"""The stored form of a chunk's view vectors (shared/embedding/views.py): float16 round trip, malformed entries
refused, and the views the indexer and the reranker both compute."""

import numpy as np
import pytest

from shared.embedding.views import chunk_views, pack, unpack
from shared.model import Chunk, DocumentMeta, ViewVectors
from shared.text import answer_units


def _chunk(body: str, heading_path: list[str], title: str = "") -> Chunk:
    meta = DocumentMeta(tenant_id="t", document_id="d", title=title)
    return Chunk("c", meta, heading_path, body, body, 0, len(body), "", 10, 0)


def test_pack_unpack_round_trip_within_float16():
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((5, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    stored = pack("m", vectors, np.array([-1, 0, 1, 1, 2]))
    assert stored.dtype == "float16" and stored.dim == 384 and len(stored.vectors) == 5 * 384 * 2
    back, units = unpack(stored)
    assert back.dtype == np.float32 and units.tolist() == [-1, 0, 1, 1, 2]
    query = rng.standard_normal(384).astype(np.float32)
    query /= np.linalg.norm(query)
    assert np.max(np.abs(back @ query - vectors @ query)) < 1e-3


@pytest.mark.parametrize(
    "views",
    [
        ViewVectors("m", 4, [0, 1], b"\x00" * 10),  # not 2 x 4 float16
        ViewVectors("m", 0, [], b""),
        ViewVectors("m", 4, [0], b"\x00" * 8, dtype="int8"),
    ],
)
def test_malformed_entries_are_refused(views):
    with pytest.raises(ValueError):
        unpack(views)


def test_views_read_the_answer_units_under_the_heading_or_the_title():
    body = "Refunds take 14 days. Contact billing first."
    views = chunk_views(_chunk(body, ["Refunds"]))
    assert views[0] == ("Refunds", -1)
    assert [unit for _, unit in views[1:]] == list(range(len(answer_units(body))))
    assert views[1][0].startswith("Refunds: ")
    # No heading: the document title stands in; no text at all: the body itself.
    assert chunk_views(_chunk(body, [], title="Policy"))[0] == ("Policy", -1)
    assert chunk_views(_chunk("", [])) == [("", -1)]
