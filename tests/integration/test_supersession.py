"""Supersession stated only in a document's text, as a new user writes it: two plain Markdown returns
policies, the 2026 one saying "Effective 2026-03-01. Replaces the 2025 policy." The ingest result reports
what was inferred; the 2025 policy stops being retrieved from that date (still found as of before it, or
with superseded versions requested)."""

import pytest

from shared.stubs import common_pb2, gateway_pb2, retriever_pb2
from tests.support.mesh import ingest_paths

pytestmark = pytest.mark.integration
TENANT = "supersede-test"
OLD = "# Returns policy 2025\n\nCustomers may return unused items within 14 days of delivery for a full refund.\n"
NEW = (
    "# Returns policy 2026\n\nEffective 2026-03-01. Replaces the 2025 policy.\n\n"
    "Customers may return unused items within 30 days of delivery for a full refund.\n"
)


def _documents(gateway, **filters) -> set[str]:
    found = gateway.Search(
        gateway_pb2.SearchRequest(
            tenant_id=TENANT,
            query="return unused items days delivery refund",
            top_k=10,
            mode=retriever_pb2.RETRIEVAL_MODE_BM25,
            filters=common_pb2.SearchFilters(**filters),
        ),
        timeout=60,
    )
    return {r.chunk.meta.document_id for r in found.results}


def test_a_replacement_stated_in_the_text_retires_the_old_policy(mesh, gateway, tmp_path):
    mesh.key_for(TENANT)
    (tmp_path / "returns-2025.md").write_text(OLD)
    (tmp_path / "returns-2026.md").write_text(NEW)
    assert _documents(gateway) == set()
    results = {r.source_uri: r for r in ingest_paths(gateway, TENANT, [str(tmp_path)])}
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    assert list(results["returns-2025.md"].statements) == []
    stated = {s.field: s for s in results["returns-2026.md"].statements}
    assert stated["effective_from"].value == "2026-03-01" and stated["effective_from"].source == "text"
    assert stated["effective_from"].evidence == "Effective 2026-03-01."
    assert stated["supersedes"].value == "the 2025 policy"
    assert stated["supersedes"].outcome.startswith("linked: returns-2025.md superseded, in force until 2026-03-01")

    assert _documents(gateway) == {"returns-2026.md"}
    assert _documents(gateway, include_superseded=True) == {"returns-2025.md", "returns-2026.md"}
    assert _documents(gateway, as_of="2026-02-01") == {"returns-2025.md"}
    asked = gateway.Ask(
        gateway_pb2.AskRequest(
            tenant_id=TENANT, question="within how many days can customers return items?", include_candidates=True
        ),
        timeout=120,
    )
    assert {c.chunk.meta.document_id for c in asked.candidates} == {"returns-2026.md"}


def test_an_ambiguous_replacement_is_reported_and_changes_nothing(mesh, gateway, tmp_path):
    tenant = "supersede-ambiguous"
    mesh.key_for(tenant)
    for name in ("returns-2025-eu.md", "returns-2025-us.md"):
        (tmp_path / name).write_text(OLD.replace("2025", f"2025 {name[13:15].upper()}"))
    first = ingest_paths(gateway, tenant, [str(tmp_path)])
    assert all(r.ok for r in first)
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "returns-2026.md").write_text(NEW)
    (result,) = ingest_paths(gateway, tenant, [str(tmp_path / "new")])
    outcome = {s.field: s.outcome for s in result.statements}["supersedes"]
    assert outcome.startswith("not linked: it could mean returns-2025-eu.md, returns-2025-us.md")
    assert "supersedes: <document id>" in outcome
    listed = gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant), timeout=30).documents
    assert all(d.effective_to == "" for d in listed)


def test_a_replacement_of_its_own_earlier_version_says_the_versions_follow(mesh, gateway, tmp_path):
    """The sample corpus's case: the 2026 version of one document says it replaces the 2025 policy, which is
    that document's earlier version. It used to be reported "not linked: no current stored document matches"."""
    tenant = "supersede-own-version"
    mesh.key_for(tenant)
    for year, text in (("2025", OLD), ("2026", NEW)):
        (tmp_path / year).mkdir()
        (tmp_path / year / "returns.md").write_text(f"---\ndoc_id: returns\nversion: '{year}'\n---\n{text}")
        (result,) = ingest_paths(gateway, tenant, [str(tmp_path / year)])
        assert result.ok, result.error
    outcome = {s.field: s.outcome for s in result.statements}["supersedes"]
    assert outcome == (
        "applied: it follows the earlier version(s) of this document: 2025 (in force until 2026-03-01T00:00:00Z)"
    )
    listed = gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant), timeout=30).documents
    assert {(d.version, d.effective_to) for d in listed} == {("2025", "2026-03-01T00:00:00Z"), ("2026", "")}


def test_a_replacement_never_names_or_retires_documents_the_writer_may_not_read(mesh, gateway, raw, tmp_path):
    """A writer holding `support` ingests a policy that "replaces the 2025 policy"; the two matching 2025
    policies are `hr` documents. The outcome used to name them ("it could mean ..."): ids the writer may not
    read. Now only documents it could supersede are candidates, and the hr policies stay in force."""
    import os

    from services.cli.documents import to_source_document
    from shared.keys import KEYS_FILE, KeyStore
    from tests.support.mesh import bearer

    tenant = "supersede-scoped"
    mesh.key_for(tenant)
    for name in ("returns-2025-eu.md", "returns-2025-us.md"):
        text = OLD.replace("2025", f"2025 {name[13:15].upper()}")
        (tmp_path / name).write_text(f"---\naccess_scopes: [hr]\n---\n{text}")
    assert all(r.ok for r in ingest_paths(gateway, tenant, [str(tmp_path)]))
    _, support = KeyStore(os.path.join(mesh.data_dir, KEYS_FILE)).create(tenant, ["support"], "writer")
    (tmp_path / "returns-2026.md").write_text(NEW)
    request = gateway_pb2.IngestRequest(documents=[to_source_document(tmp_path / "returns-2026.md", "returns-2026.md")])
    (result,) = raw.Ingest(request, metadata=bearer(support), timeout=120)
    assert result.ok, result.error
    outcome = {s.field: s.outcome for s in result.statements}["supersedes"]
    assert outcome.startswith("not linked: no current stored document matches") and "2025" not in outcome
    listed = gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant), timeout=30).documents
    assert {d.document_id: d.effective_to for d in listed if "2025" in d.document_id} == {
        "returns-2025-eu.md": "",
        "returns-2025-us.md": "",
    }


def test_a_product_change_described_in_release_notes_retires_no_document(mesh, gateway, tmp_path):
    """Release notes saying "The new dashboard replaces the legacy upload page" closed the tenant's
    'Upload API guide' (the only stored document sharing a word with "upload page"), and its passages were
    no longer retrieved. What a product replaces is not a document the notes replace: nothing is stated."""
    tenant = "supersede-prose"
    mesh.key_for(tenant)
    (tmp_path / "upload-guide.md").write_text(
        "# Upload API guide\n\nUse the upload endpoint to send files up to 5 GB. Multipart uploads resume.\n"
    )
    (tmp_path / "release-3-0.md").write_text(
        "# Release notes 3.0\n\nThe new dashboard replaces the legacy upload page with a drag-and-drop area.\n"
    )
    results = {r.source_uri: r for r in ingest_paths(gateway, tenant, [str(tmp_path)])}
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    assert list(results["release-3-0.md"].statements) == []
    listed = gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant), timeout=30).documents
    assert {d.document_id: d.effective_to for d in listed} == {"upload-guide.md": "", "release-3-0.md": ""}
