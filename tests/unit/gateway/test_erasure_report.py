"""The erasure report says when its verification could not look for the erased text itself."""

from services.gateway.erasure import report_markdown


def _report(text_runs: int, chunk_ids: int) -> dict:
    return {
        "request_id": "r1",
        "subject": {"tenant_id": "acme", "scope": "document", "document_ids": ["tiny"]},
        "started_at": "t0",
        "finished_at": "t1",
        "verified": True,
        "lineage": {"chunk_ids": chunk_ids, "chunk_ids_sha256": "0" * 64},
        "probes": {"text_runs": text_runs, "kind": "runs", "sha256_prefixes": [], "chunk_ids": chunk_ids},
        "stores": [],
        "not_reached": [],
    }


def test_a_report_without_text_probes_says_the_text_was_not_checked():
    assert "not for the text" in report_markdown(_report(0, 1))


def test_a_report_with_text_probes_or_nothing_erased_does_not():
    assert "not for the text" not in report_markdown(_report(2, 1))
    assert "not for the text" not in report_markdown(_report(0, 0))
