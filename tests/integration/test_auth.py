"""API keys at a real gateway over gRPC on loopback: each refusal has its exact status code."""

import os
import sqlite3
import urllib.request

import grpc
import pytest

from shared.keys import KEYS_FILE, KeyStore
from shared.stubs import gateway_pb2, indexer_pb2, retriever_pb2
from tests.support.mesh import TENANT, bearer

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def keys(mesh):
    return KeyStore(os.path.join(mesh.data_dir, KEYS_FILE))


def search(raw, token=None, tenant=TENANT, scopes=(), query="refund policy"):
    request = gateway_pb2.SearchRequest(tenant_id=tenant, query=query, top_k=5, filters={"access_scopes": list(scopes)})
    return raw.Search(request, metadata=bearer(token) if token else None, timeout=60)


def refused(call) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value


def test_no_key_is_unauthenticated(raw, ingested):
    err = refused(lambda: search(raw))
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED and "missing API key" in err.details()


@pytest.mark.parametrize("token", ["not-a-key", "rmk_0123456789abcdef_guessed", "Basic abc"])
def test_unknown_key_is_unauthenticated(raw, token):
    assert refused(lambda: search(raw, token)).code() == grpc.StatusCode.UNAUTHENTICATED


def test_a_known_id_with_the_wrong_secret_is_unauthenticated(raw, keys):
    key, token = keys.create(TENANT, [], "reader")
    forged = token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
    err = refused(lambda: search(raw, forged))
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED and "unknown API key" in err.details()


def test_revoked_key_is_unauthenticated(mesh, raw, keys, ingested):
    key, token = keys.create(TENANT, [], "reader")
    assert search(raw, token).results  # works before
    keys.revoke(key.key_id)
    err = refused(lambda: search(raw, token))
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED and "revoked" in err.details()
    log = (mesh.log_dir / "gateway.log").read_text()
    assert key.key_id in log and token.split("_", 2)[2] not in log  # logged by id, never the secret


def test_expired_key_is_unauthenticated(raw, keys):
    key, token = keys.create(TENANT, [], "reader", expires_at="2099-01-01")
    assert search(raw, token).results  # works before
    with sqlite3.connect(keys.path) as conn:  # time passes: its expiry is behind us now
        conn.execute("UPDATE api_keys SET expires_at = '2020-01-01T00:00:00Z' WHERE key_id = ?", (key.key_id,))
    err = refused(lambda: search(raw, token))
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED and "expired" in err.details()


def test_reader_calling_ingest_or_delete_is_permission_denied(raw, keys):
    _, token = keys.create(TENANT, ["*"], "reader")
    doc = gateway_pb2.IngestRequest(tenant_id=TENANT, documents=[{"meta": {"source_uri": "x.md"}, "content": b"# X"}])
    err = refused(lambda: list(raw.Ingest(doc, metadata=bearer(token), timeout=60)))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED and "reader" in err.details() and "Ingest" in err.details()
    err = refused(
        lambda: raw.DeleteDocument(
            indexer_pb2.DeleteDocumentRequest(tenant_id=TENANT, document_id="pricing/price-list"),
            metadata=bearer(token),
            timeout=30,
        )
    )
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED


def test_key_for_tenant_a_naming_tenant_b_is_permission_denied(raw, keys, ingested):
    _, token = keys.create("tenant-a", ["*"], "writer")
    err = refused(lambda: search(raw, token, tenant=TENANT))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "'tenant-a'" in err.details() and f"'{TENANT}'" in err.details()
    err = refused(
        lambda: raw.Ask(
            gateway_pb2.AskRequest(tenant_id=TENANT, question="whats E-4412"), metadata=bearer(token), timeout=60
        )
    )
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED


def test_scope_escalation_in_the_request_is_permission_denied(raw, keys, ingested):
    _, token = keys.create(TENANT, ["support"], "reader")
    err = refused(lambda: search(raw, token, scopes=["support", "hr-confidential"], query="salary bands"))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED and "'hr-confidential'" in err.details()
    err = refused(
        lambda: raw.GetChunk(
            retriever_pb2.GetChunkRequest(tenant_id=TENANT, chunk_id="any", access_scopes=["hr-confidential"]),
            metadata=bearer(token),
            timeout=30,
        )
    )
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED
    held = search(raw, token, scopes=["support"], query="salary bands")  # what it holds is fine
    assert all("hr-confidential" not in r.chunk.meta.access_scopes for r in held.results)


def test_an_empty_tenant_means_the_keys_tenant_and_its_scopes_bound_what_is_read(raw, keys, ingested):
    _, token = keys.create(TENANT, ["hr-confidential"], "reader")
    found = search(raw, token, tenant="", scopes=["hr-confidential"], query="engineering salary bands")
    assert "handbook/salary-bands" in {r.chunk.meta.document_id for r in found.results}
    _, other = keys.create("stranger", ["*"], "reader")
    assert not search(raw, other, tenant="", query="engineering salary bands").results


def test_a_key_lists_only_the_documents_it_may_read(raw, keys, ingested):
    """ListDocuments is a reader's call; a confidential document's title and path used to be listed to any key."""

    def listed(scopes) -> dict[str, list[str]]:
        _, token = keys.create(TENANT, scopes, "reader")
        reply = raw.ListDocuments(gateway_pb2.ListDocumentsRequest(), metadata=bearer(token), timeout=30)
        return {d.document_id: list(d.access_scopes) for d in reply.documents}

    everything = listed(["*"])
    assert everything["handbook/salary-bands"] == ["hr-confidential"]
    support = listed(["support"])
    assert "handbook/salary-bands" not in support and support
    assert all({"public", "support"} & set(scopes) for scopes in support.values())
    assert {d for d, scopes in everything.items() if {"public", "support"} & set(scopes)} == set(support)
    assert listed(["hr-confidential"])["handbook/salary-bands"] == ["hr-confidential"]


def test_failures_are_counted_by_reason(mesh, raw):
    refused(lambda: search(raw))
    with urllib.request.urlopen(mesh.metrics_url("gateway"), timeout=5) as reply:
        text = reply.read().decode()
    counted = {
        line.split('reason="')[1].split('"')[0]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("ragmesh_auth_failures_total{")
    }
    assert counted.get("missing", 0) >= 1


def test_health_needs_no_key(mesh):
    assert mesh.health("gateway") == "SERVING"


def test_a_writer_files_documents_only_under_scopes_it_holds(mesh, raw, keys, tmp_path):
    from services.cli.documents import collect_files, to_source_document

    _, token = keys.create("scoped-writer", ["support"], "writer")
    for name, scopes in (("hr.md", "[hr-confidential]"), ("support.md", "[support]"), ("open.md", "public")):
        (tmp_path / name).write_text(f"---\naccess_scopes: {scopes}\n---\n# {name}\n\nThe walrus rota for {name}.\n")
    docs = [to_source_document(p, uri) for p, uri in collect_files([str(tmp_path)])]
    results = {
        r.source_uri: r
        for r in raw.Ingest(gateway_pb2.IngestRequest(documents=docs), metadata=bearer(token), timeout=120)
    }
    assert results["support.md"].ok and results["open.md"].ok
    assert results["hr.md"].error_code == "PERMISSION_DENIED" and "'hr-confidential'" in results["hr.md"].error


def test_a_writer_cannot_overwrite_or_delete_a_document_it_may_not_read(raw, keys, tmp_path):
    from services.cli.documents import to_source_document

    def ingest(token, scopes):
        path = tmp_path / f"{scopes}.md"
        path.write_text(f"---\ndoc_id: guarded/salaries\naccess_scopes: [{scopes}]\n---\n# Pay\n\nBands {scopes}.\n")
        request = gateway_pb2.IngestRequest(documents=[to_source_document(path, path.name)])
        return list(raw.Ingest(request, metadata=bearer(token), timeout=120))[0]

    def delete(token):
        return raw.DeleteDocument(
            indexer_pb2.DeleteDocumentRequest(
                document_id="guarded/salaries", guard={"enabled": True, "held_scopes": ["*"]}
            ),  # a forged guard
            metadata=bearer(token),
            timeout=30,
        )

    _, owner = keys.create("guarded", ["hr"], "writer")
    _, other = keys.create("guarded", ["support"], "writer")
    assert ingest(owner, "hr").ok
    overwrite = ingest(other, "support")
    assert overwrite.error_code == "PERMISSION_DENIED" and "'hr'" in overwrite.error
    err = refused(lambda: delete(other))
    assert err.code() == grpc.StatusCode.PERMISSION_DENIED and "guarded/salaries" in err.details()
    assert delete(owner).chunks_removed >= 1


def test_a_document_filed_under_a_scope_no_key_holds_is_written_with_a_warning(raw, keys, tmp_path):
    """A misspelt scope ("HR" where the keys hold "hr") made a document readable by '*' keys only, in silence."""
    from services.cli.documents import collect_files, to_source_document

    _, writer = keys.create("scope-typos", ["*"], "writer")
    keys.create("scope-typos", ["hr", "finance-reports"], "reader")
    for name, scopes in (("typo.md", "[HR]"), ("right.md", "[hr]"), ("new.md", "[legal]"), ("open.md", "public")):
        (tmp_path / name).write_text(f"---\naccess_scopes: {scopes}\n---\n# {name}\n\nThe rota for {name}.\n")
    docs = [to_source_document(p, uri) for p, uri in collect_files([str(tmp_path)])]
    results = {
        r.source_uri: r
        for r in raw.Ingest(gateway_pb2.IngestRequest(documents=docs), metadata=bearer(writer), timeout=120)
    }
    assert all(r.ok for r in results.values()), [r.error for r in results.values()]
    warned = {uri: [s for s in r.statements if s.field == "access_scopes"] for uri, r in results.items()}
    assert warned["right.md"] == [] and warned["open.md"] == []
    (typo,) = warned["typo.md"]
    assert (typo.value, typo.source) == ("HR", "front matter")
    assert "no active key of tenant 'scope-typos' holds 'HR'" in typo.outcome and "did you mean 'hr'?" in typo.outcome
    (new,) = warned["new.md"]
    assert new.value == "legal" and "ragmesh keys create" in new.outcome


def test_documents_are_listed_a_page_at_a_time_within_the_keys_scopes(raw, keys, ingested):
    """Pages in (document_id, version) order join up to the whole listing, for a key that reads everything and
    for one whose pages come back short (the scope filter runs after the page is cut)."""
    for scopes in (["*"], ["support"]):
        _, token = keys.create(TENANT, scopes, "reader")
        whole = raw.ListDocuments(gateway_pb2.ListDocumentsRequest(), metadata=bearer(token), timeout=30)
        assert not whole.next_page_token and whole.documents
        paged, request, pages = [], gateway_pb2.ListDocumentsRequest(page_size=2), 0
        while True:
            page = raw.ListDocuments(request, metadata=bearer(token), timeout=30)
            assert len(page.documents) <= 2
            paged += page.documents
            pages += 1
            if not page.next_page_token:
                break
            request.page_token = page.next_page_token
        assert paged == list(whole.documents) and pages >= len(whole.documents) / 2
        keys_in_order = [(d.document_id, d.version) for d in paged]
        assert keys_in_order == sorted(keys_in_order)
    for request, field in (
        (gateway_pb2.ListDocumentsRequest(page_token="bm90IGEgcGFnZQ"), "page_token"),
        (gateway_pb2.ListDocumentsRequest(page_size=-5), "page_size"),
    ):
        err = refused(lambda r=request: raw.ListDocuments(r, metadata=bearer(token), timeout=30))
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and field in err.details()
