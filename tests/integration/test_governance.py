"""Front matter through the real mesh: an unreadable document fails alone, the batch goes on, and
nothing stated as confidential is readable as public."""

import pytest

from shared.stubs import gateway_pb2
from tests.support.mesh import ingest_paths

pytestmark = pytest.mark.integration
TENANT = "governed"
BODY = "# Pay\n\nThe quokka bonus is paid in March.\n"


def test_unusable_front_matter_fails_its_document_alone(gateway, tmp_path):
    files = {
        "block.md": "---\naccess_scopes:\n  - hr-confidential\n---\n",
        "flow.md": "---\naccess_scopes: [hr-confidential, finance]\n---\n",
        "misspelled.md": "---\nacess_scopes: [hr-confidential]\n---\n",
        "empty.md": "---\naccess_scopes: []\n---\n",
        "backwards.md": "---\naccess_scopes: [hr]\neffective_from: 2026-01-01\neffective_to: 2025-01-01\n---\n",
        "public.md": "---\naccess_scopes: public\n---\n",
    }
    for name, front in files.items():
        (tmp_path / name).write_text(front + BODY)
    results = {r.source_uri: r for r in ingest_paths(gateway, TENANT, [str(tmp_path)])}
    assert {n for n, r in results.items() if r.ok} == {"block.md", "flow.md", "public.md"}
    for name, key in (
        ("misspelled.md", "acess_scopes"),
        ("empty.md", "access_scopes"),
        ("backwards.md", "effective_to"),
    ):
        assert results[name].error_code == "INVALID_ARGUMENT"
        assert name in results[name].error and key in results[name].error

    def visible(scopes):
        found = gateway.Search(
            gateway_pb2.SearchRequest(
                tenant_id=TENANT, query="quokka bonus", top_k=10, filters={"access_scopes": scopes}
            ),
            timeout=60,
        )
        return {r.chunk.meta.document_id for r in found.results}

    assert visible([]) == {"public.md"}
    assert visible(["hr-confidential"]) == {"public.md", "block.md", "flow.md"}
