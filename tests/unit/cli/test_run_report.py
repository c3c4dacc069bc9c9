"""The run report shared by `ragmesh ingest` and `ragmesh sync`: one line per document, and a document version
given by two files of a run (or by a sent file and an unchanged one) is a failure that names both files."""

import io

from services.cli.ingest import RunReport
from shared.stubs import gateway_pb2


def _ok(uri: str, doc: str, version: str = "1") -> gateway_pb2.IngestResult:
    return gateway_pb2.IngestResult(source_uri=uri, document_id=doc, version=version, ok=True, chunks_written=2)


def test_a_second_file_giving_the_same_version_fails_and_names_the_first():
    report = RunReport(io.StringIO())
    for result in (_ok("a.md", "shared"), _ok("b.md", "shared", "2"), _ok("c.md", "shared")):
        report.record(result)
    lines = report.out.getvalue().splitlines()
    assert (report.ok, report.failed, report.written) == (2, 1, {"shared"})
    assert lines[0] == "ok     a.md -> shared@1: 2 written, 0 unchanged, 0 removed"
    assert lines[2].startswith("FAILED c.md: shared@1 was also given by a.md earlier in this run")


def test_a_version_an_unchanged_file_gives_is_not_silently_replaced():
    report = RunReport(io.StringIO())
    report.already_given("rota", "1", "rota.md", "(unchanged in the folder)")
    report.record(_ok("rota-copy.md", "rota"))
    report.record(_ok("rota.md", "rota"))  # the file that gives it is not its own duplicate
    assert (report.ok, report.failed) == (1, 1)
    assert "rota@1 was also given by rota.md (unchanged in the folder)" in report.out.getvalue()


def test_a_refused_document_is_one_failed_line():
    report = RunReport(io.StringIO())
    refused = gateway_pb2.IngestResult(source_uri="x.pdf", ok=False, error_code="INVALID_ARGUMENT", error="no text")
    report.record(refused)
    report.fail("huge.txt", "RESOURCE_EXHAUSTED", "too large")
    assert (report.ok, report.failed, report.written) == (0, 2, set())
    assert report.out.getvalue().splitlines() == [
        "FAILED x.pdf: INVALID_ARGUMENT: no text",
        "FAILED huge.txt: RESOURCE_EXHAUSTED: too large",
    ]
