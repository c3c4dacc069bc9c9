"""The conformance suite against a real OpenSearch node (`make opensearch-up`; CI starts it first).

No skip when the node is missing: a backend that silently goes untested looks like one that passes.
"""

import os
import uuid

import numpy as np
import pytest
from opensearchpy import OpenSearch
from opensearchpy.exceptions import ConnectionError as EngineConnectionError

from shared.errors import FailedPrecondition, Unavailable
from shared.index.factory import open_index
from shared.index.lexical import search_phrases
from shared.index.opensearch import OpenSearchIndex
from shared.model import SearchFilters
from tests.conformance.index_suite import (
    MODEL_ID,
    IndexConformance,
    chunk,
    meta,
    stored_views,
    unit,
    write,
    write_with_views,
)
from tests.conformance.isolation import IsolationConformance

URL = os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200")


@pytest.fixture(scope="session")
def client():
    client = OpenSearch(hosts=[URL], timeout=30)
    try:
        health = client.cluster.health(wait_for_status="yellow")
    except EngineConnectionError as exc:
        pytest.fail(
            f"OpenSearch is not reachable at {URL} ({exc.info or exc}); start it with "
            "`make opensearch-up` or point OPENSEARCH_URL at a node",
            pytrace=False,
        )
    assert health["status"] in ("yellow", "green"), health
    return client


@pytest.fixture
def index(client):
    backend = OpenSearchIndex(URL, f"ragmesh-test-{uuid.uuid4().hex[:12]}", client=client)
    backend.warm_up()
    yield backend
    backend.drop()


class TestOpenSearchIndex(IndexConformance, IsolationConformance):
    def test_a_second_client_sees_writes(self, index):
        """A retriever replica with its own client (and no cached dimension) reads the writer's chunks."""
        reader = OpenSearchIndex(URL, index.index)
        reader.warm_up()
        assert reader.knn("acme", unit(1), MODEL_ID, self.ANY, 5) == []
        write(index, meta(), [("fresh content", unit(1))])
        assert len(reader.bm25("acme", "fresh", self.ANY, 5)) == 1
        assert len(reader.knn("acme", unit(1), MODEL_ID, self.ANY, 5)) == 1

    def test_count_chunks_spans_tenants(self, index):
        write(index, meta(tenant="a"), [("one", unit(1)), ("two", unit(0, 1))])
        write(index, meta(tenant="b"), [("three", unit(1))])
        assert index.count_chunks() == 3

    def test_open_end_round_trips_as_empty(self, index):
        write(index, meta(eff_to=""), [("no end date", unit(1))])
        assert index.bm25("acme", "end date", self.ANY, 1)[0].chunk.meta.effective_to == ""

    def test_governance_change_keeps_the_vector(self, index):
        """An unchanged chunk is updated in place; the update must not drop it from k-NN."""
        write(index, meta(scopes=("public",)), [("moved to hr", unit(1))])
        result = write(index, meta(scopes=("hr",)), [("moved to hr", unit(1))])
        assert (result.written, result.unchanged) == (0, 1)
        assert index.knn("acme", unit(1), MODEL_ID, self.ANY, 5) == []
        hr = SearchFilters(access_scopes=["hr"])
        assert [h.chunk.body for h in index.knn("acme", unit(1), MODEL_ID, hr, 5)] == ["moved to hr"]

    def test_re_embedding_with_another_model_replaces_the_vectors(self, index):
        write(index, meta(), [("same text", unit(1))])
        chunks = [chunk(meta(), 0, "same text")]
        result = index.replace_document_version(meta(), chunks, {chunks[0].chunk_id: unit(0, 1)}, "new/model")
        assert (result.written, result.unchanged, result.removed) == (1, 0, 1)
        assert index.existing_chunk_ids(meta(), "new/model") == {chunks[0].chunk_id}
        hits = index.knn("acme", unit(0, 1), "new/model", self.ANY, 5)
        assert [h.chunk.embedding_model_id for h in hits] == ["new/model"]
        assert hits[0].score == pytest.approx(1.0, abs=1e-5)

    def test_a_model_of_another_dimension_is_refused(self, index):
        write(index, meta(), [("eight dimensions", unit(1))])
        with pytest.raises(FailedPrecondition, match="embedding model mismatch"):
            index.knn("acme", np.full(4, 0.5, dtype=np.float32), "small/model", self.ANY, 5)


def test_an_unreachable_node_is_unavailable():
    with pytest.raises(Unavailable, match="unreachable"):
        OpenSearchIndex("http://127.0.0.1:9", "ragmesh-nowhere").warm_up()


def test_factory_reads_url_and_prefix(tmp_path):
    backend = open_index(
        "opensearch", str(tmp_path), {"OPENSEARCH_URL": "http://127.0.0.1:9201", "RAGMESH_OPENSEARCH_PREFIX": "team-a"}
    )
    assert (backend.name, backend.url, backend.index) == ("opensearch", "http://127.0.0.1:9201", "team-a-chunks")
    with pytest.raises(ValueError, match="embedded, opensearch"):
        open_index("elastic", str(tmp_path))


def test_search_phrases_keep_identifiers_whole():
    assert search_phrases('E-4412 "sync" OR x*') == ["E 4412", "sync", "OR", "x"]
    assert search_phrases("!!! ???") == []


def test_each_embedding_model_gets_its_own_index_generation(tmp_path):
    env = {"RAGMESH_OPENSEARCH_PREFIX": "team-a"}
    bge = open_index("opensearch", str(tmp_path), env, embed_model="bge")
    e5 = open_index("opensearch", str(tmp_path), env, embed_model="intfloat/e5-small-v2")
    assert bge.index == "team-a-chunks-baai-bge-small-en-v1-5"
    assert e5.index == "team-a-chunks-intfloat-e5-small-v2"
    embedded = open_index("embedded", str(tmp_path), embed_model="BAAI/bge-small-en-v1.5")
    assert embedded.path.endswith("index-baai-bge-small-en-v1-5.sqlite")


# ---- copy-index between backends (both directions, through the CLI) -----------------------------------


def _tenant_corpus(index) -> None:
    """Two tenants; a document in two versions (one superseded), scopes, several chunks per version."""
    write(index, meta(doc="refunds", version="1", eff_to="2024-01-01"), [("refunds within 30 days", unit(1))])
    write(
        index,
        meta(doc="refunds", version="2", eff_from="2024-01-01"),
        [("refunds within 14 days", unit(1, 1)), ("E-4412 means a sync conflict", unit(0, 1))],
    )
    write(index, meta(doc="payroll", scopes=("hr",)), [("salaries are paid monthly", unit(0, 0, 1))])
    write(index, meta(tenant="beta", doc="other"), [("beta tenant text about refunds", unit(1))])


def _exported(index, tenant: str) -> list:
    """The tenant's versions as comparable values: meta, every chunk field, vectors rounded."""
    out = []
    for version_meta, chunks, vectors in index.export(tenant):
        out.append(
            (
                version_meta,
                chunks,
                {cid: np.round(v, 6).tolist() for cid, v in sorted(vectors.items())},
            )
        )
    return sorted(out, key=lambda row: (row[0].document_id, row[0].version))


def _copy(monkeypatch, data_dir: str, prefix: str, source: str, target: str) -> None:
    from services.cli.main import main

    monkeypatch.setenv("OPENSEARCH_URL", URL)
    monkeypatch.setenv("RAGMESH_OPENSEARCH_PREFIX", prefix)
    argv = ["copy-index", "--from", source, "--to", target, "--data-dir", data_dir, "--embed-model", MODEL_ID]
    assert main([*argv, "--tenant", "acme", "--tenant", "beta"]) == 0


def test_copy_index_embedded_to_opensearch_and_back(client, tmp_path, monkeypatch, capsys):
    prefix = f"ragmesh-test-copy-{uuid.uuid4().hex[:8]}"
    original = open_index("embedded", str(tmp_path / "a"), embed_model=MODEL_ID)
    original.warm_up()
    _tenant_corpus(original)
    opensearch = open_index("opensearch", "", {"OPENSEARCH_URL": URL, "RAGMESH_OPENSEARCH_PREFIX": prefix}, MODEL_ID)
    try:
        _copy(monkeypatch, str(tmp_path / "a"), prefix, "embedded", "opensearch")
        assert "5 chunks copied from embedded to opensearch" in capsys.readouterr().out
        _copy(monkeypatch, str(tmp_path / "b"), prefix, "opensearch", "embedded")
        assert "5 chunks copied from opensearch to embedded" in capsys.readouterr().out
        round_trip = open_index("embedded", str(tmp_path / "b"), embed_model=MODEL_ID)
        for tenant in ("acme", "beta"):
            assert _exported(opensearch, tenant) == _exported(original, tenant)
            assert _exported(round_trip, tenant) == _exported(original, tenant)
            assert opensearch.stats(tenant) == original.stats(tenant) == round_trip.stats(tenant)
        # The copies answer as the original does: the current version only, scopes enforced, same vectors.
        hr = SearchFilters(access_scopes=["hr"])
        for copy in (opensearch, round_trip):
            for filters in (SearchFilters(), hr, SearchFilters(include_superseded=True)):
                want = [h.chunk.chunk_id for h in original.bm25("acme", "refunds salaries", filters, 10)]
                assert sorted(h.chunk.chunk_id for h in copy.bm25("acme", "refunds salaries", filters, 10)) == sorted(
                    want
                )
                # Sorted: chunks at equal distance may come in either order.
                knn = sorted(
                    (h.chunk.chunk_id, round(h.score, 4)) for h in copy.knn("acme", unit(1), MODEL_ID, filters, 10)
                )
                assert knn == sorted(
                    (h.chunk.chunk_id, round(h.score, 4)) for h in original.knn("acme", unit(1), MODEL_ID, filters, 10)
                )
        # Copying again stores the same rows: nothing is duplicated.
        _copy(monkeypatch, str(tmp_path / "b"), prefix, "opensearch", "embedded")
        assert round_trip.count_chunks() == original.count_chunks() == 5
    finally:
        opensearch.drop()


def test_copy_index_carries_view_vectors(client, tmp_path, monkeypatch, capsys):
    """The reranker's view vectors travel with their chunks both ways, and each copy returns them as the
    original does; a chunk stored without them stays without."""
    prefix = f"ragmesh-test-copy-{uuid.uuid4().hex[:8]}"
    original = open_index("embedded", str(tmp_path / "a"), embed_model=MODEL_ID)
    original.warm_up()
    write_with_views(
        original, meta(doc="v"), [("views travel with the chunk", unit(1)), ("views and back", unit(0, 1))]
    )
    write(original, meta(tenant="beta", doc="plain"), [("no views here", unit(1))])
    opensearch = open_index("opensearch", "", {"OPENSEARCH_URL": URL, "RAGMESH_OPENSEARCH_PREFIX": prefix}, MODEL_ID)
    try:
        _copy(monkeypatch, str(tmp_path / "a"), prefix, "embedded", "opensearch")
        _copy(monkeypatch, str(tmp_path / "b"), prefix, "opensearch", "embedded")
        assert "3 chunks copied from opensearch to embedded" in capsys.readouterr().out
        round_trip = open_index("embedded", str(tmp_path / "b"), embed_model=MODEL_ID)
        want = stored_views(original)
        assert len(want) == 2 and all(v is not None for v in want.values())
        assert stored_views(opensearch) == want and stored_views(round_trip) == want
        assert (
            list(stored_views(opensearch, "beta").values()) == list(stored_views(round_trip, "beta").values()) == [None]
        )
        for copy in (opensearch, round_trip):
            hits = copy.bm25("acme", "views", SearchFilters(), 10) + copy.knn(
                "acme", unit(1), MODEL_ID, SearchFilters(), 10
            )
            assert {h.chunk.chunk_id: h.chunk.views for h in hits} == want
    finally:
        opensearch.drop()


def test_copy_index_refuses_one_backend_to_itself(tmp_path):
    from services.cli.main import main

    argv = ["copy-index", "--from", "embedded", "--to", "embedded", "--data-dir", str(tmp_path), "--tenant", "acme"]
    assert "both 'embedded'" in str(main(argv))
