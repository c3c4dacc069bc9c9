"""The erasure report says when its verification could not look for the erased text itself, and when a
document erasure found nothing to erase."""

from services.gateway.erasure import report_markdown

STORE = {
    "store": "index:embedded",
    "location": "index.sqlite",
    "removed": 0,
    "before": 0,
    "after": 0,
    "probes_found": 0,
    "probes_checked": 0,
    "ids_found": 0,
    "ids_checked": 0,
    "clean": True,
    "method": "DELETE",
    "note": "",
}


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


def test_a_document_erasure_that_found_nothing_says_so():
    """A mistyped id erased nothing and its report read like any other verified erasure."""
    # The retriever drops its view of the tenant whatever the document: its count says nothing of it.
    nothing = {**_report(0, 0), "stores": [STORE, {**STORE, "store": "retriever:memory", "removed": 1}]}
    assert "Nothing was stored under this document id" in report_markdown(nothing)
    erased = {**_report(2, 3), "stores": [{**STORE, "removed": 3}]}
    assert "Nothing was stored" not in report_markdown(erased)
    tenant = {**_report(0, 0), "subject": {"tenant_id": "acme", "scope": "tenant", "document_ids": []}}
    assert "Nothing was stored" not in report_markdown(tenant)
