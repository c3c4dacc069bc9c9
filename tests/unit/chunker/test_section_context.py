"""Each chunk's parent context is bounded: a large heading-less document no longer grows with the
square of its size (a 1 MB text used to make a 381 MB chunker response)."""

import random

import pytest

from services.chunker.chunking import MAX_SECTION_CHARS, MIN_SECTION_CHARS, section_window
from shared import convert
from shared.model import DocumentMeta
from shared.stubs import chunker_pb2

GRPC_LIMIT = 64 * 1024 * 1024


def heading_less(size: int) -> str:
    rng = random.Random(0)
    words = ["alpha", "beta", "gamma", "refund", "invoice", "policy", "storage", "quota", "sync", "region"]
    sentences, total = [], 0
    while total < size:
        sentence = " ".join(rng.choice(words) for _ in range(12)).capitalize() + "."
        sentences.append(sentence)
        total += len(sentence) + 1
    return " ".join(sentences)


@pytest.mark.slow
def test_a_5_mb_heading_less_document_fits_one_response(chunker):
    text = heading_less(5_000_000)
    meta, chunks = chunker.run(
        text.encode(), DocumentMeta(tenant_id="t", document_id="", version="", access_scopes=[], source_uri="big.txt")
    )
    response = chunker_pb2.ChunkDocumentResponse(
        meta=convert.meta_to_pb(meta), chunks=[convert.chunk_to_pb(c) for c in chunks]
    )
    assert response.ByteSize() < GRPC_LIMIT // 2
    assert sum(len(c.section_text) for c in chunks) < 5 * len(text)
    for c in chunks[:: max(1, len(chunks) // 50)]:
        assert c.body in c.section_text and len(c.section_text) <= MAX_SECTION_CHARS


def test_the_window_holds_the_chunk_and_stays_inside_its_section():
    text = "x" * 100 + "".join(f"{i:05d} " for i in range(20000)) + "y" * 100
    section = (100, len(text) - 100)
    for start in (100, 50_000, section[1] - 700):
        end = start + 600
        window = section_window(text, *section, start, end)
        assert text[start:end] in window and "x" not in window and "y" not in window
        assert len(window) == MIN_SECTION_CHARS
    small = section_window(text, 100, 100 + MIN_SECTION_CHARS, 200, 300)
    assert small == text[100 : 100 + MIN_SECTION_CHARS]  # a section that fits rides whole
    huge_chunk = section_window(text, *section, 1000, 1000 + MAX_SECTION_CHARS + 10)
    assert huge_chunk == text[1000 : 1000 + MAX_SECTION_CHARS + 10]
