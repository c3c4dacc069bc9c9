"""ingest -> ask through the six real processes over gRPC on loopback."""

import os
import threading
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from loadtest import metrics
from ragmesh.client import RagmeshClient, document
from services.evaluation.cases import EvalCase
from services.evaluation.runner import ask_case
from shared.config import STAGES
from shared.stubs import common_pb2, gateway_pb2, indexer_pb2, indexer_pb2_grpc, retriever_pb2
from tests.support.mesh import EXAMPLES, TENANT, ingest_paths

pytestmark = pytest.mark.integration


def ask(gateway, question, tenant=TENANT, timeout=60, **filters):
    return gateway.Ask(
        gateway_pb2.AskRequest(tenant_id=tenant, question=question, filters=common_pb2.SearchFilters(**filters)),
        timeout=timeout,
    )


def restart(mesh, gateway, stage):
    """Bring a stopped stage back and wait until the gateway reaches it again (its channel may be
    in reconnect backoff for a moment after the stage is SERVING)."""
    mesh.start_stage(stage)
    mesh.wait_serving(120, [stage])
    if stage == "indexer":  # a Search never calls the indexer: probe it with a delete of nothing
        delete = indexer_pb2.DeleteDocumentRequest(tenant_id="restart-probe", document_id="none")
        for _ in range(50):
            try:
                gateway.DeleteDocument(delete, timeout=10)
                return
            except grpc.RpcError as err:
                if err.code() != grpc.StatusCode.UNAVAILABLE:
                    return  # reached
            time.sleep(0.2)
        return
    request = gateway_pb2.SearchRequest(tenant_id=TENANT, query="E-4412", top_k=1, rerank=True)
    for _ in range(50):
        try:
            if not gateway.Search(request, timeout=10).degraded:
                return
        except grpc.RpcError:
            pass
        time.sleep(0.2)


def assert_citations_verifiable(response):
    context_ids = {p.chunk.chunk_id for p in response.context}
    assert response.answer.citations
    for cite in response.answer.citations:
        assert cite.chunk_id in context_ids
        chunk = next(p.chunk for p in response.context if p.chunk.chunk_id == cite.chunk_id)
        offset = cite.char_start - chunk.char_start
        assert chunk.body[offset : offset + len(cite.quote)] == cite.quote


def test_every_stage_serves_health_and_reflection(mesh):
    for stage in STAGES:
        with grpc.insecure_channel(mesh.address(stage)) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            answer = next(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
            names = {s.name for s in answer.list_services_response.service}
            assert f"ragmesh.v1.{stage.capitalize()}" in names
    assert len({p.pid for p in mesh.processes.values()}) == 6


def test_identifier_lookup_cites_the_right_chunk(gateway, ingested):
    response = ask(gateway, "whats E-4412")
    assert not response.answer.abstained, response.answer
    assert_citations_verifiable(response)
    top = response.answer.citations[0]
    assert top.document_id == "manuals/error-codes"
    assert any("E-4412" in h for h in top.heading_path)


def test_table_lookup_quotes_the_row(gateway, ingested):
    response = ask(gateway, "how much is the Team plan per month")
    assert_citations_verifiable(response)
    assert any("$79" in c.quote and c.document_id == "pricing/price-list" for c in response.answer.citations)
    # The row is read under its column names in the answer (the citation quotes it as it is).
    assert "Plan: Team; Monthly price: $79" in response.answer.text


def test_the_passage_whose_score_lets_an_answer_through_is_one_the_generator_reads(gateway, ingested):
    """'what is customer data' is let through on the MSA's definitions, which the reranker fused with the first stage
    ranks sixth: the answer quotes the definition, not the breach notice ranked above it."""
    response = ask(gateway, "what is customer data")
    assert max(p.scores.rerank_score for p in response.context) == pytest.approx(response.top_rerank_score)
    assert response.answer.citations[0].quote.startswith('1.2 "Customer Data" means'), response.answer.text


def test_a_csv_export_is_answered_from_its_row(gateway, tmp_path):
    """A spreadsheet export (CSV) was refused as an unsupported content type; it is now one table whose
    rows are read under their header."""
    tenant = "csv-export"
    (tmp_path / "office-contacts.csv").write_text(
        "Office,City,Reception phone,Opening hours,Fire warden\n"
        "Larkspur House,Dublin,+353 1 555 0101,08:00-18:00,Aoife Brennan\n"
        'Quay Tower,Rotterdam,"+31 10 555 0199",07:30-17:30,Joost de Vries\n'
        "Harbour Point,Lisbon,+351 21 555 0144,09:00-19:00,Inês Carvalho\n"
    )
    (result,) = ingest_paths(gateway, tenant, [str(tmp_path)])
    assert result.ok and result.document_id == "office-contacts.csv", result.error
    reply = ask(gateway, "reception phone number of the Lisbon office", tenant=tenant)
    assert not reply.answer.abstained, reply.answer.reason
    assert_citations_verifiable(reply)
    assert reply.answer.citations[0].quote.startswith("| Harbour Point | Lisbon | +351 21 555 0144 |")
    assert "Reception phone: +351 21 555 0144" in reply.answer.text


def test_an_excel_workbook_is_answered_from_a_row_of_its_sheet(gateway, tmp_path):
    """XLSX was refused as an unsupported content type; each visible sheet is now a section holding its table."""
    import openpyxl

    book = openpyxl.Workbook()
    book.active.title = "Parking"
    for row in (
        ("Office", "Garage", "Visitor spaces", "Entry code"),
        ("Larkspur House", "Zephyr level 3", 12, "4471"),
        ("Quay Tower", "Basement B2", 30, "9902"),
    ):
        book.active.append(row)
    book.save(tmp_path / "facilities.xlsx")
    tenant = "xlsx-workbook"
    (result,) = ingest_paths(gateway, tenant, [str(tmp_path)])
    assert result.ok and result.document_id == "facilities.xlsx", result.error
    reply = ask(gateway, "how many visitor parking spaces does Quay Tower have", tenant=tenant)
    assert not reply.answer.abstained, reply.answer.reason
    assert_citations_verifiable(reply)
    cited = reply.answer.citations[0]
    assert cited.heading_path == ["Parking"] and cited.quote.startswith("| Quay Tower | Basement B2 | 30 |")


def test_unanswerable_question_abstains_with_suggested_reading(gateway, ingested):
    response = ask(gateway, "what is the parental leave policy")
    assert response.answer.abstained and not response.answer.citations
    assert response.answer.missing
    assert len(response.suggested_reading) == 3


def test_superseded_version_is_hidden_unless_asked_for_by_date(gateway, ingested):
    now = gateway.Search(gateway_pb2.SearchRequest(tenant_id=TENANT, query="refund window days", top_k=20), timeout=60)
    versions = {r.chunk.meta.version for r in now.results if r.chunk.meta.document_id == "handbook/refund-policy"}
    assert versions == {"2026"}
    then = gateway.Search(
        gateway_pb2.SearchRequest(
            tenant_id=TENANT, query="refund window days", top_k=20, filters=common_pb2.SearchFilters(as_of="2025-06-01")
        ),
        timeout=60,
    )
    versions = {r.chunk.meta.version for r in then.results if r.chunk.meta.document_id == "handbook/refund-policy"}
    assert versions == {"2025"}


def test_a_new_version_of_a_document_replaces_the_old_one_in_answers(gateway, tmp_path):
    """Re-issued with a new version and no dates, the document's new text is the one answered from; the old
    version stays searchable as history."""
    tenant = "reissued"
    for version, colour in (("1", "red"), ("2", "blue")):
        folder = tmp_path / version
        folder.mkdir()
        (folder / "paint.md").write_text(
            f"---\ndoc_id: paint/guide\nversion: '{version}'\n---\n# Paint guide\n\n"
            f"The lobby handrail is painted {colour} every spring.\n"
        )
        assert all(r.ok for r in ingest_paths(gateway, tenant, [str(folder)]))
    reply = ask(gateway, "what colour is the lobby handrail painted", tenant=tenant)
    assert not reply.answer.abstained, reply.answer.reason
    assert [c.version for c in reply.answer.citations] == ["2"] and "blue" in reply.answer.text
    everything = gateway.Search(
        gateway_pb2.SearchRequest(
            tenant_id=tenant,
            query="lobby handrail painted",
            top_k=10,
            filters=common_pb2.SearchFilters(include_superseded=True),
        ),
        timeout=60,
    )
    assert sorted(r.chunk.meta.version for r in everything.results) == ["1", "2"]


def test_a_question_about_the_past_is_answered_from_the_version_in_force_then(gateway, ingested):
    def ask(question, **filters):
        return gateway.Ask(
            gateway_pb2.AskRequest(
                tenant_id=TENANT,
                question=question,
                filters=common_pb2.SearchFilters(**filters),
                include_candidates=True,
            ),
            timeout=60,
        )

    def refund_versions(response):
        return {
            c.chunk.meta.version for c in response.candidates if c.chunk.meta.document_id == "handbook/refund-policy"
        }

    # A year: the versions in force at its end, as if the caller had set as_of.
    dated = ask("in 2025 who approved a refund above 5k")
    assert refund_versions(dated) == {"2025"}
    assert "2025-12-31" in dated.time_reference and "'2025'" in dated.time_reference
    # "previous", no date: of a document with a superseded version among the candidates, only that version.
    former = ask("who approves a refund above 5k under the previous policy")
    assert refund_versions(former) == {"2025"} and "previous" in former.time_reference
    assert all(c.version == "2025" for c in former.answer.citations if c.document_id == "handbook/refund-policy")
    # Then and now together: both versions compete.
    both = ask("refund approval above 5k old vs new policy")
    assert refund_versions(both) == {"2025", "2026"}
    # No time in the question, or a time the caller set: as before, and the question's words are not read.
    assert refund_versions(present := ask("who approves a refund above 5k")) == {"2026"}
    assert present.time_reference == ""
    explicit = ask("in 2025 who approved a refund above 5k", as_of="2026-06-01")
    assert refund_versions(explicit) == {"2026"} and explicit.time_reference == ""


def test_access_scopes_are_enforced_in_the_query(gateway, ingested):
    def docs(**filters):
        response = gateway.Search(
            gateway_pb2.SearchRequest(
                tenant_id=TENANT, query="salary bands", top_k=50, filters=common_pb2.SearchFilters(**filters)
            ),
            timeout=60,
        )
        return {r.chunk.meta.document_id for r in response.results}

    assert "handbook/salary-bands" not in docs()
    assert "handbook/salary-bands" in docs(access_scopes=["hr-confidential"])


def test_a_misspelled_question_is_read_as_the_passages_spell_it(mesh, gateway, ingested):
    """'wat is the refund polcy for anual plans' was refused: two of its words matched no passage word."""

    def read_as_total() -> float:
        snapshot = metrics.scrape([mesh.metrics_url("gateway")], timeout=10)
        return metrics.total(snapshot, "ragmesh_questions_read_as_total")

    read_before = read_as_total()
    response = ask(gateway, "wat is the refund polcy for anual plans")
    assert response.read_as == "wat is the refund policy for annual plans"
    # Operators see how often questions are read so (the gateway's Prometheus counter).
    assert read_as_total() == read_before + 1
    assert not response.answer.abstained
    assert {c.document_id for c in response.answer.citations} == {"handbook/refund-policy"}
    assert_citations_verifiable(response)
    assert ask(gateway, "what is the refund policy for annual plans").read_as == ""  # as written when it can be
    # An error code typed without its hyphen reads as the passages write it, and is answered from its entry.
    bare = ask(gateway, "how to fix e4421")
    assert bare.read_as == "how to fix E-4421" and not bare.answer.abstained
    assert "sign out and sign in again" in bare.answer.text
    # A greeting and a sign-off around the question are not read as its words (shared/chatter.py).
    polite = ask(gateway, "Hello, could you please let me know how long invoices are retained? Thanks!")
    assert polite.read_as == "how long invoices are retained?" and not polite.answer.abstained
    assert {c.document_id for c in polite.answer.citations} == {"handbook/data-retention"}
    assert "7 years" in polite.answer.text


def test_a_question_told_after_a_story_is_searched_and_answered_as_asked(gateway, ingested):
    """A story's telling ("I was reading the docs last night and got confused") is not searched for: read as the
    question's words, it lowered every passage's score below the answer threshold (shared/story.py). What the
    passages best for the question write of it ("business customer") still chooses the answer."""
    plain = ask(gateway, "how long are invoices retained?")
    told = ask(gateway, "I was reading the docs last night and got confused: how long are invoices retained?")
    assert told.top_rerank_score == pytest.approx(plain.top_rerank_score, abs=1e-6)
    assert not told.answer.abstained and "7 years" in told.answer.text
    assert {c.document_id for c in told.answer.citations} == {"handbook/data-retention"}
    business = ask(gateway, "We're a business customer and bought 10 days ago, can we get a refund?")
    assert business.answer.text.startswith("Business customers may request a refund within 14 days")
    assert_citations_verifiable(business)
    # The story's times are not the time the question asks about ("new" had read as asking for every version).
    dated = "what was the refund window under the 2025 policy?"
    told = ask(gateway, f"{dated} I'm new here and still learning.")
    assert told.time_reference == ask(gateway, dated).time_reference != ""


def test_what_the_asker_pastes_or_quotes_from_a_document_is_not_what_they_ask(gateway, ingested):
    """Found by use: a question under paragraphs pasted from the travel policy was answered with the pasted hotel cap
    (the pasted words found the pasted passages again, top score above the threshold); one asked of a quoted
    sentence echoed it, or was answered from another document sharing a word of the question."""
    travel = Path(EXAMPLES, "handbook", "travel-expenses.md").read_text().split("\n\n")
    pasted = "\n\n".join(p for p in travel if "hotel cap" in p or "Premium economy" in p)
    response = ask(
        gateway, f"Here's what the travel policy says:\n\n{pasted}\n\nSo how long do I have to submit expenses?"
    )
    assert response.read_as == "how long do I have to submit expenses?"
    assert not response.answer.abstained and "within 30 days" in response.answer.text
    assert_citations_verifiable(response)
    # Pasted from the 2026 refund policy, whose opening names "the 2025 Refund Policy": that year had chosen the 2025
    # version, which holds none of the pasted sentences, and the answer echoed its opening.
    refund = Path(EXAMPLES, "handbook", "refund-policy-2026.md").read_text().split("\n\n")
    pasted = "\n\n".join(p for p in refund if p.startswith(("This policy replaces", "A customer may request")))
    response = ask(gateway, f"I read this:\n\n{pasted}\n\nwho approves a $3000 refund?")
    assert response.read_as == "who approves a $3000 refund?"
    assert "VP of Finance" in response.answer.text
    # Asked of a quote: answered from the quoted document, the DPA's next sentence, or not at all.
    objection = ask(
        gateway,
        'According to the DPA, "Northwind will notify Customer at least 30 days before adding a new Sub-processor". '
        "Can we object?",
    )
    assert objection.answer.text.startswith("Customer may object on reasonable data protection grounds")
    assert {c.document_id for c in objection.answer.citations} == {"contracts/data-processing-addendum"}
    taxes = ask(
        gateway, 'The MSA says "Customer will pay the fees stated in the Order Form" - does that include taxes?'
    )
    assert taxes.answer.abstained


def test_a_message_of_separate_questions_is_answered_question_by_question(mesh, gateway, ingested):
    """Asked as one, a message of two questions was searched and reranked as one: the passage answering each
    scored low against both, so the gate refused it or one part was answered from a stray passage (asked on a
    line each, 3 of 60 pairs of train/dev questions got both parts right). Each question now goes through the
    funnel on its own (shared/questions.py), and the answer quotes each under its question."""

    def parted() -> float:
        snapshot = metrics.scrape([mesh.metrics_url("gateway")], timeout=10)
        return metrics.total(snapshot, "ragmesh_separate_questions_total")

    before = parted()
    message = "Hi team, two questions:\n1) how long are invoices kept\n2) what is the hotel cap in london?\nThanks!"
    response = ask(gateway, message)
    assert parted() == before + 1
    invoices, hotels = response.parts
    assert (invoices.question, hotels.question) == ("how long are invoices kept", "what is the hotel cap in london?")
    # Each part is the question asked alone: the same score and answer.
    alone = ask(gateway, "how long are invoices kept")
    assert invoices.top_rerank_score == pytest.approx(alone.top_rerank_score, abs=1e-6)
    assert invoices.answer.text == alone.answer.text and "7 years" in alone.answer.text
    assert {c.document_id for c in hotels.answer.citations} == {"handbook/travel-expenses"}
    assert "$350" in hotels.answer.text and hotels.answer.text.endswith("[1]")
    assert response.answer.text == (
        f"1. {invoices.question}\n{invoices.answer.text}\n\n2. {hotels.question}\n{hotels.answer.text[:-3]}[2]"
    )
    assert response.answer.reason == "answered" and len(response.answer.citations) == 2
    assert response.top_rerank_score == pytest.approx(min(invoices.top_rerank_score, hotels.top_rerank_score))
    assert_citations_verifiable(response)
    # A part the documents do not answer is refused on its own, with its closest passages.
    mixed = ask(gateway, "1) how long are invoices kept 2) where is the berlin office")
    assert not mixed.answer.abstained and mixed.answer.reason == "answered_in_part"
    assert mixed.parts[1].answer.abstained and mixed.parts[1].suggested_reading
    assert mixed.answer.text.endswith(
        "2. where is the berlin office\nNot found in the documents: " + (f"{mixed.parts[1].answer.missing}.")
    )
    # Each part runs the whole funnel: a message may ask at most four.
    with pytest.raises(grpc.RpcError) as err:
        ask(gateway, "1) vpn rules 2) hotel cap nyc 3) refund window 4) parental leave 5) p1 ack")
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "question" in err.value.details() and "5 separate questions" in err.value.details()


def test_a_misspelling_is_read_only_from_passages_the_caller_may_read(gateway, ingested):
    """The correction reads the retrieved candidates' words, so a word only a withheld document holds ("salary",
    hr-confidential) is never revealed by it."""
    question = "midpoint salery for a staff engineer"
    assert "salary" not in ask(gateway, question).read_as
    assert "salary" in ask(gateway, question, access_scopes=["hr-confidential"]).read_as
    search = gateway.Search(gateway_pb2.SearchRequest(tenant_id=TENANT, query="refund polcy", top_k=3), timeout=60)
    assert search.read_as == "refund policy"


def test_search_reports_every_stage_score(gateway, ingested):
    response = gateway.Search(
        gateway_pb2.SearchRequest(tenant_id=TENANT, query="E-4412 sync conflict", top_k=5, rerank=True), timeout=60
    )
    assert response.reranker_model_id and not response.degraded
    top = response.results[0]
    assert top.scores.bm25_rank >= 1 and top.scores.dense_rank >= 1
    assert top.scores.fused_rank >= 1 and top.scores.rerank_rank == 1


def test_get_chunk_resolves_a_citation_to_its_highlight(gateway, ingested):
    response = ask(gateway, "whats E-4412")
    cite = response.answer.citations[0]
    view = gateway.GetChunk(retriever_pb2.GetChunkRequest(tenant_id=TENANT, chunk_id=cite.chunk_id), timeout=30)
    section = view.chunk.section_text
    assert section[view.highlight_start : view.highlight_end] == view.chunk.body
    assert cite.quote in view.chunk.body


def test_reingest_is_an_idempotent_upsert(mesh, gateway, ingested):
    with grpc.insecure_channel(mesh.address("indexer")) as channel:
        stats = indexer_pb2_grpc.IndexerStub(channel).Stats
        before = stats(indexer_pb2.StatsRequest(tenant_id=TENANT), timeout=10).chunk_count
        again = ingest_paths(gateway, TENANT, [EXAMPLES])
        after = stats(indexer_pb2.StatsRequest(tenant_id=TENANT), timeout=10).chunk_count
    assert before == after > 0
    assert all(r.ok and r.chunks_written == 0 and r.chunks_removed == 0 for r in again)


def test_a_bad_document_fails_alone(gateway, tmp_path):
    (tmp_path / "good.md").write_text("# Good\n\nThe good document mentions zebra crossings.\n")
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (tmp_path / "garbage.txt").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "scan.pdf").write_bytes(b"%PDF-1.7 not really")
    results = {r.source_uri: r for r in ingest_paths(gateway, "batch", [str(tmp_path)])}
    assert results["good.md"].ok and results["good.md"].chunks_written >= 1
    for name in ("empty.md", "latin1.txt", "garbage.txt", "scan.pdf"):
        assert not results[name].ok
        assert results[name].error_code == "INVALID_ARGUMENT"
        assert name in results[name].error
    found = gateway.Search(gateway_pb2.SearchRequest(tenant_id="batch", query="zebra", top_k=5), timeout=60)
    assert found.results[0].chunk.meta.document_id == "good.md"


def test_two_files_giving_one_document_version_in_a_request_do_not_overwrite_each_other(gateway):
    """Two uploads with one name (or two files stating one doc_id and version): the second used to replace the
    first's text, both reported ok."""
    tenant = "duplicates"
    docs = [
        common_pb2.SourceDocument(meta=common_pb2.DocumentMeta(source_uri="same.md"), content=text.encode())
        for text in ("# One\n\nThe first upload mentions walruses.\n", "# Two\n\nThe second mentions narwhals.\n")
    ]
    first, second = gateway.Ingest(gateway_pb2.IngestRequest(tenant_id=tenant, documents=docs), timeout=120)
    assert first.ok and not second.ok and second.error_code == "INVALID_ARGUMENT"
    assert second.error == (
        "same.md (document 2 of the request): same.md@1 is also given by same.md (document 1 of the request); "
        "give each file its own doc_id or version"
    )
    found = gateway.Search(gateway_pb2.SearchRequest(tenant_id=tenant, query="walruses narwhals", top_k=5), timeout=60)
    assert [r.chunk.body.split("\n")[-1] for r in found.results] == ["The first upload mentions walruses."]


def _long_manual(sections: int) -> bytes:
    """A real-looking long document: one chunk per section, each with a dozen sentences to embed as views."""
    parts = []
    for n in range(sections):
        sentences = " ".join(
            f"Step {n}.{i}: set valve {n * 13 + i} to {(n * 7 + i) % 90} percent and record the pressure in bay {i}."
            for i in range(12)
        )
        parts.append(f"## Procedure {n}\n\n{sentences}\n")
    return ("# Plant manual\n\n" + "\n".join(parts)).encode()


def _upsert_errors(mesh) -> float:
    snapshot = metrics.scrape([mesh.metrics_url("indexer")], timeout=10)
    return metrics.total(snapshot, "ragmesh_rpc_errors_total", method="UpsertDocument")


def test_a_document_past_its_deadline_fails_alone_and_is_not_written(mesh, gateway):
    """A document that outlives the call's deadline fails alone, the ones after it are still indexed, and the
    indexer stops it without writing it (it used to go on embedding for minutes, then write it unannounced)."""
    tenant = "slowdoc"
    docs = [
        document(b"# First\n\nThe first note mentions heron feathers.\n", "first.md"),
        document(_long_manual(480), "manual.md"),  # ~60 s of embedding on 2 cores (120 sections: 15-17 s), far past 5 s
        document(b"# Last\n\nThe last note mentions otter dens.\n", "last.md"),
    ]
    errors_before = _upsert_errors(mesh)
    with RagmeshClient(mesh.address("gateway"), api_key=mesh.key_for(tenant), tenant=tenant) as client:
        # No allowance for size: the manual's would cover its embedding.
        results = {r.source_uri: r for r in client.ingest(docs, timeout=5, seconds_per_kib=0)}
        assert results["first.md"].ok and results["last.md"].ok
        assert not results["manual.md"].ok
        assert results["manual.md"].error_code == "DEADLINE_EXCEEDED"
        assert "manual.md" in results["manual.md"].error
        # The indexer notices within one embedding slice and answers the abandoned call with an error.
        deadline = time.monotonic() + 60
        while _upsert_errors(mesh) == errors_before and time.monotonic() < deadline:
            time.sleep(1)
        assert _upsert_errors(mesh) > errors_before, "the indexer never stopped the abandoned document"
    listed = gateway.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant), timeout=30)
    assert {d.document_id for d in listed.documents} == {"first.md", "last.md"}


def test_tenants_never_see_each_other(gateway, ingested):
    response = gateway.Search(gateway_pb2.SearchRequest(tenant_id="stranger", query="E-4412", top_k=5), timeout=60)
    assert list(response.results) == []
    assert ask(gateway, "whats E-4412", tenant="stranger").answer.abstained


def test_delete_propagates(gateway, tmp_path):
    (tmp_path / "note.md").write_text("# Note\n\nThe secret launch codename is Bluefin.\n")
    assert all(r.ok for r in ingest_paths(gateway, "deleting", [str(tmp_path)]))
    query = gateway_pb2.SearchRequest(tenant_id="deleting", query="launch codename", top_k=5)
    assert len(gateway.Search(query, timeout=60).results) == 1
    removed = gateway.DeleteDocument(
        indexer_pb2.DeleteDocumentRequest(tenant_id="deleting", document_id="note.md"), timeout=30
    )
    assert removed.chunks_removed == 1
    assert list(gateway.Search(query, timeout=60).results) == []


@pytest.mark.parametrize(
    "request_, field",
    [
        (gateway_pb2.AskRequest(tenant_id="t", question="  "), "question"),
    ],
)
def test_bad_requests_get_invalid_argument_naming_the_field(gateway, request_, field):
    with pytest.raises(grpc.RpcError) as err:
        gateway.Ask(request_, timeout=30)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in err.value.details()


def test_deadline_is_honoured(gateway, ingested):
    with pytest.raises(grpc.RpcError) as err:
        ask(gateway, "whats E-4412", timeout=0.001)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


def test_sigterm_drains_in_flight_calls(mesh, gateway, tmp_path):
    for i in range(12):
        (tmp_path / f"doc{i}.md").write_text(f"# Doc {i}\n\n" + " ".join(f"Fact {j} of doc {i}." for j in range(60)))
    outcome = {}

    def run():
        try:
            outcome["results"] = ingest_paths(gateway, "draining", [str(tmp_path)])
        except grpc.RpcError as err:
            outcome["error"] = err

    worker = threading.Thread(target=run)
    worker.start()
    indexer = mesh.processes["indexer"]
    time.sleep(1.0)  # the ingest is in flight (embedding takes seconds)
    indexer.terminate()
    worker.join(120)
    try:
        assert indexer.wait(30) == 0
        # Calls that were running when SIGTERM arrived finished; later ones may find the indexer gone.
        results = outcome.get("results", [])
        assert results and results[0].ok, outcome
    finally:
        restart(mesh, gateway, "indexer")


def test_a_dead_stage_fails_with_a_status_naming_it(mesh, gateway, ingested):
    mesh.stop_stage("retriever")
    try:
        with pytest.raises(grpc.RpcError) as err:
            ask(gateway, "whats E-4412", timeout=30)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "retriever" in err.value.details()
    finally:
        restart(mesh, gateway, "retriever")


def test_without_the_reranker_answers_are_degraded_not_failed(mesh, gateway, ingested):
    mesh.stop_stage("reranker")
    try:
        response = ask(gateway, "how much is the Team plan per month", timeout=30)
        assert response.degraded and "reranker" in response.degraded_reason
        assert not response.answer.abstained
        assert_citations_verifiable(response)
        # An evaluation run at this moment records the answer as degraded, so no gate is judged on it.
        case = EvalCase("q", "how much is the Team plan per month", TENANT, "general", [])
        assert "reranker" in ask_case(gateway, case, "hybrid", 30).degraded
    finally:
        restart(mesh, gateway, "reranker")


def test_the_data_dir_is_readable_by_the_mesh_user_only(mesh, gateway, ingested):
    """Every tenant's documents (the index), every question and answer (the answer log) and the logs live in
    the data dir: no other local user may read them (they were created 0644 in a 0755 folder)."""
    assert not ask(gateway, "whats E-4412").answer.abstained  # the answer log holds a question now
    found = []
    for folder, dirs, files in os.walk(mesh.data_dir):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found.append(name)
            mode = os.stat(path).st_mode & 0o777
            assert mode & 0o077 == 0, f"{path} is {oct(mode)}"
    assert {"answers.sqlite", "gateway.log"} <= set(found) and any(n.startswith("index-") for n in found)
