"""sync predicts a file's document id as the chunker will: its front matter's doc_id, else its path."""

from pathlib import Path

import pytest

from services.cli.sync import SourceFile, stated_document_id

FRONT = "---\ndoc_id: handbook/refunds\n---\n# Refunds\n\nWithin 14 days.\n"


def _file(content: bytes, uri: str = "renamed.md") -> SourceFile:
    return SourceFile(Path(uri), uri, content, "")


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16"])
def test_front_matter_names_the_document_in_any_encoding_the_chunker_reads(encoding):
    assert stated_document_id(_file(FRONT.encode(encoding))) == "handbook/refunds"


@pytest.mark.parametrize("content", [b"# No front matter\n", b"%PDF-1.7 \x00\x01", b"caf\xe9\n"])
def test_without_a_readable_doc_id_the_path_stands_in(content):
    assert stated_document_id(_file(content)) == "renamed.md"
