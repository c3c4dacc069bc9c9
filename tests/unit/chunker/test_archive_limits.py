"""Zip-based documents are bounded by what they expand to, not by the bytes sent."""

import io
import zipfile
from pathlib import Path

import docx
import pytest

from shared.errors import ResourceExhausted
from shared.model import DocumentMeta
from tests.support.chunker import make_chunker

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "contracts" / "professional-services-addendum.docx"


def run(chunker, content: bytes, uri="big.docx"):
    return chunker.run(
        content, DocumentMeta(tenant_id="t", document_id="", version="", access_scopes=[], source_uri=uri)
    )


def _bomb(member_bytes: int) -> bytes:
    """A real DOCX with one extra member of zeros: kilobytes on the wire, megabytes unpacked."""
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(EXAMPLE.read_bytes())) as src,
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out,
    ):
        for item in src.infolist():
            out.writestr(item, src.read(item.filename))
        out.writestr("word/media/padding.bin", b"\0" * member_bytes)
    return buffer.getvalue()


def test_an_archive_expanding_past_the_limit_is_refused_before_it_is_opened():
    chunker = make_chunker(max_bytes=1_000_000)
    bomb = _bomb(12_000_000)
    assert len(bomb) < 1_000_000
    with pytest.raises(ResourceExhausted, match="big.docx expands to .* over the 10000000-byte limit"):
        run(chunker, bomb)


def test_a_member_with_a_bomb_like_ratio_is_refused():
    chunker = make_chunker(max_bytes=10_000_000)
    with pytest.raises(ResourceExhausted, match="padding.bin.*expands"):
        run(chunker, _bomb(5_000_000))


def test_text_that_outgrows_the_document_limit_is_refused():
    document = docx.Document()
    for i in range(2000):
        document.add_paragraph(f"Clause {i}: the supplier shall deliver the services as agreed. " * 4)
    buffer = io.BytesIO()
    document.save(buffer)
    content = buffer.getvalue()
    unpacked = sum(m.file_size for m in zipfile.ZipFile(io.BytesIO(content)).infolist())
    limit = max(len(content), unpacked // 10) + 1000  # the bytes sent and the archive pass; the text does not
    assert 2000 * 4 * 60 > limit
    chunker = make_chunker(max_bytes=limit)
    with pytest.raises(ResourceExhausted, match="characters of text, over"):
        run(chunker, content)


def test_the_sample_docx_still_reads():
    meta, chunks = run(make_chunker(), EXAMPLE.read_bytes(), uri="contracts/professional-services-addendum.docx")
    assert chunks and meta.content_type.endswith("wordprocessingml.document")
