"""`ragmesh ingest` of a folder: a file too large for any request fails alone, the rest is ingested."""

import io
import os

from services.cli.ingest import MAX_FILE_BYTES, ingest
from shared.stubs import gateway_pb2


class _Gateway:
    def __init__(self):
        self.sent = []

    def ingest(self, documents, tenant="", timeout=None):  # RagmeshClient.ingest's signature
        for doc in documents:
            self.sent.append(doc.meta.source_uri)
            yield gateway_pb2.IngestResult(source_uri=doc.meta.source_uri, document_id=doc.meta.source_uri, ok=True)


def test_an_oversized_file_fails_alone(tmp_path):
    (tmp_path / "a.md").write_text("# A\n\nalpha\n")
    with open(tmp_path / "b-huge.txt", "wb") as huge:  # sparse: no disk used
        huge.truncate(MAX_FILE_BYTES + 1)
    (tmp_path / "c.md").write_text("# C\n\ngamma\n")
    out = io.StringIO()
    gateway = _Gateway()
    ok, failed = ingest(gateway, [str(tmp_path)], "demo", 10, out=out)
    assert (ok, failed) == (2, 1)
    assert gateway.sent == ["a.md", "c.md"]
    assert "FAILED b-huge.txt: RESOURCE_EXHAUSTED" in out.getvalue()
    assert os.path.getsize(tmp_path / "b-huge.txt") > MAX_FILE_BYTES
