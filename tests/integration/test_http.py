"""The HTTP front door against a live mesh: every route, the same answers as the gRPC gateway, errors mapped
to HTTP statuses with the gateway's message, the same bearer keys, and the size limits."""

import pytest
import requests

from ragmesh.client import RagmeshClient
from services.cli.mesh import free_port
from services.http.proto_json import to_json
from tests.support.mesh import TENANT, answer_log, start_front_door, wait_http

pytestmark = pytest.mark.integration

ROUTES = {
    "/v1/ask",
    "/v1/search",
    "/v1/ingest",
    "/v1/documents",
    "/v1/documents/{document_id}",
    "/v1/chunks/{chunk_id}",
    "/v1/feedback",
    "/v1/chat/completions",
    "/v1/models",
    "/healthz",
    "/readyz",
}
ANSWERED = "how much is the Team plan per month"
UNANSWERABLE = "what is the parental leave policy"


@pytest.fixture(scope="module")
def key(mesh) -> str:
    return mesh.key_for(TENANT)


@pytest.fixture(scope="module")
def client(mesh) -> RagmeshClient:
    """The Python client straight to the gateway: what the HTTP answers are compared with."""
    with RagmeshClient(mesh.address("gateway"), api_key=mesh.key_for, timeout=120) as c:
        yield c


def post(url: str, path: str, key: str | None, body) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return requests.post(f"{url}{path}", json=body, headers=headers, timeout=120)


def get(url: str, path: str, key: str | None, **params) -> requests.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return requests.get(f"{url}{path}", headers=headers, params=params, timeout=60)


def error_of(reply: requests.Response, status: int, code: str) -> str:
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert (error["code"], error["status"]) == (code, status), error
    return error["message"]


def test_openapi_documents_every_route_and_health(front_door):
    spec = requests.get(f"{front_door}/openapi.json", timeout=10).json()
    assert ROUTES <= set(spec["paths"])
    assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert requests.get(f"{front_door}/healthz", timeout=10).json() == {"status": "ok"}
    ready = requests.get(f"{front_door}/readyz", timeout=10)
    assert ready.status_code == 200 and ready.json()["gateway_status"] == "SERVING"


def test_ask_is_the_gateways_answer_with_citations(front_door, ingested, key, client):
    reply = post(front_door, "/v1/ask", key, {"question": ANSWERED})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert not body["answer"]["abstained"] and body["answer"]["citations"]
    assert any("$79" in c["quote"] and c["document_id"] == "pricing/price-list" for c in body["answer"]["citations"])
    direct = client.ask(ANSWERED)
    assert body["answer"]["text"] == direct.answer.text
    assert body["answer"]["citations"] == to_json(direct.answer)["citations"]
    assert body["answer_id"] and body["answer_id"] != direct.answer_id  # each ask is logged on its own


def test_ask_abstains_with_suggested_reading(front_door, ingested, key):
    body = post(front_door, "/v1/ask", key, {"question": UNANSWERABLE}).json()
    assert body["answer"]["abstained"] and not body["answer"]["citations"]
    assert body["answer"]["missing"]
    assert len(body["suggested_reading"]) == 3


def test_search_ranks_as_the_gateway_does(front_door, ingested, key, client):
    reply = post(front_door, "/v1/search", key, {"query": "Team plan price", "top_k": 3, "mode": "bm25"})
    assert reply.status_code == 200, reply.text
    results = reply.json()["results"]
    assert len(results) == 3
    direct = client.search("Team plan price", top_k=3, mode="bm25")
    assert [r["chunk"]["chunk_id"] for r in results] == [r.chunk.chunk_id for r in direct.results]
    assert [r["scores"]["bm25_rank"] for r in results] == [1, 2, 3]
    # A document left out by the filter is not searched, and the rest still are.
    left_out = {
        "query": "Team plan price",
        "top_k": 3,
        "mode": "bm25",
        "filters": {"exclude_document_ids": ["pricing/price-list"]},
    }
    others = post(front_door, "/v1/search", key, left_out).json()["results"]
    assert "pricing/price-list" in {r["chunk"]["meta"]["document_id"] for r in results}
    assert others and "pricing/price-list" not in {r["chunk"]["meta"]["document_id"] for r in others}


def test_get_chunk_shows_the_cited_passage_in_its_section(front_door, ingested, key, client):
    citation = client.ask(ANSWERED).answer.citations[0]
    reply = get(front_door, f"/v1/chunks/{citation.chunk_id}", key)
    assert reply.status_code == 200, reply.text
    view = reply.json()
    assert view == to_json(client.get_chunk(citation.chunk_id))
    chunk = view["chunk"]
    assert chunk["chunk_id"] == citation.chunk_id
    assert chunk["section_text"][view["highlight_start"] : view["highlight_end"]] == chunk["body"]
    at = view["highlight_start"] + citation.char_start - chunk["char_start"]
    assert chunk["section_text"][at : at + len(citation.quote)] == citation.quote


def test_ingest_upload_search_and_delete(front_door, mesh):
    tenant = "http-upload"
    key = mesh.key_for(tenant)
    good = (
        "---\ndoc_id: uploads/kettle\nversion: '1'\n---\n# Kettle\n\nThe Zephyr kettle boils one litre in 94 seconds.\n"
    )
    files = [
        ("files", ("kettle.md", good.encode(), "text/markdown")),
        ("files", ("broken.pdf", b"%PDF-1.4 not really a pdf", "application/pdf")),
    ]
    reply = requests.post(
        f"{front_door}/v1/ingest", files=files, headers={"Authorization": f"Bearer {key}"}, timeout=300
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert (body["ok"], body["failed"]) == (1, 1), body
    by_uri = {r["source_uri"]: r for r in body["results"]}
    assert by_uri["kettle.md"]["ok"] and by_uri["kettle.md"]["document_id"] == "uploads/kettle"
    assert by_uri["kettle.md"]["chunks_written"] >= 1
    assert not by_uri["broken.pdf"]["ok"] and by_uri["broken.pdf"]["error_code"] == "INVALID_ARGUMENT"
    assert by_uri["broken.pdf"]["error"]

    found = post(front_door, "/v1/search", key, {"query": "Zephyr kettle litre", "top_k": 1}).json()["results"]
    assert found and found[0]["chunk"]["meta"]["document_id"] == "uploads/kettle"
    [listed] = get(front_door, "/v1/documents", key).json()["documents"]
    assert (listed["document_id"], listed["version"], listed["source_uri"]) == ("uploads/kettle", "1", "kettle.md")
    assert listed["access_scopes"] == ["public"] and listed["chunks"] == by_uri["kettle.md"]["chunks_written"]

    deleted = requests.delete(
        f"{front_door}/v1/documents/uploads/kettle", headers={"Authorization": f"Bearer {key}"}, timeout=60
    )
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["chunks_removed"] == by_uri["kettle.md"]["chunks_written"]
    assert post(front_door, "/v1/search", key, {"query": "Zephyr kettle litre", "top_k": 1}).json()["results"] == []
    assert get(front_door, "/v1/documents", key).json() == {"documents": [], "next_page_token": ""}


def test_documents_are_listed_a_page_at_a_time(front_door, ingested, key, client):
    whole = [(d.document_id, d.version) for d in client.list_documents()]
    paged, params = [], {"page_size": 5}
    while True:
        page = get(front_door, "/v1/documents", key, **params).json()
        assert len(page["documents"]) <= 5
        paged += [(d["document_id"], d["version"]) for d in page["documents"]]
        if not page.get("next_page_token"):
            break
        params["page_token"] = page["next_page_token"]
    assert paged == whole and len(whole) > 5
    assert "page_size" in error_of(get(front_door, "/v1/documents", key, page_size=-1), 400, "INVALID_ARGUMENT")
    assert "page_token" in error_of(get(front_door, "/v1/documents", key, page_token="x"), 400, "INVALID_ARGUMENT")


@pytest.mark.parametrize("params", [{"limit": 2}, {"tenant": "other"}, {"page_size": 5, "pagesize": 5}])
def test_a_query_parameter_a_route_does_not_take_is_refused_by_name(front_door, key, params):
    """Like an unknown JSON field: a misspelt parameter was dropped and the call run without it."""
    message = error_of(get(front_door, "/v1/documents", key, **params), 400, "INVALID_ARGUMENT")
    unknown = next(name for name in params if name != "page_size")
    assert f"query.{unknown}" in message and "page_token" in message


def test_feedback_reaches_the_answer_log(front_door, ingested, key, mesh):
    answer_id = post(front_door, "/v1/ask", key, {"question": ANSWERED}).json()["answer_id"]
    body = {
        "answer_id": answer_id,
        "rating": "down",
        "comment": "wanted the annual price",
        "expected_document_id": "pricing/price-list",
    }
    reply = post(front_door, "/v1/feedback", key, body)
    assert reply.status_code == 200, reply.text
    feedback_id = reply.json()["feedback_id"]
    rows = {r["feedback_id"]: r for r in answer_log(mesh.data_dir).feedback_rows()}
    row = rows[feedback_id]
    assert (row["answer_id"], row["rating"], row["comment"], row["expected_document_id"]) == (
        answer_id,
        "RATING_THUMBS_DOWN",
        "wanted the annual price",
        "pricing/price-list",
    )


def test_feedback_is_listed_for_review(front_door, ingested, key, client):
    answer_id = post(front_door, "/v1/ask", key, {"question": ANSWERED}).json()["answer_id"]
    given = post(front_door, "/v1/feedback", key, {"answer_id": answer_id, "rating": "up"}).json()["feedback_id"]
    whole = [e.feedback_id for e in client.list_feedback().entries]
    assert given in whole
    paged, params = [], {"page_size": 1}
    while True:
        page = get(front_door, "/v1/feedback", key, **params).json()
        assert len(page["entries"]) <= 1
        paged += [e["feedback_id"] for e in page["entries"]]
        if not page.get("next_page_token"):
            break
        params["page_token"] = page["next_page_token"]
    assert paged == whole
    (entry,) = [
        e for e in get(front_door, "/v1/feedback", key, rating="up").json()["entries"] if e["feedback_id"] == given
    ]
    assert entry["answer_id"] == answer_id and entry["question"] == ANSWERED and entry["rating"] == "RATING_THUMBS_UP"
    assert get(front_door, "/v1/feedback", key, rating="down").json().get("entries", []) == [
        e for e in get(front_door, "/v1/feedback", key).json()["entries"] if e["rating"] == "RATING_THUMBS_DOWN"
    ]
    assert "rating" in error_of(get(front_door, "/v1/feedback", key, rating="meh"), 400, "INVALID_ARGUMENT")


def test_grpc_errors_map_to_http_statuses_with_the_gateways_message(front_door, ingested, key, mesh):
    assert "missing API key" in error_of(
        post(front_door, "/v1/ask", None, {"question": ANSWERED}), 401, "UNAUTHENTICATED"
    )
    error_of(post(front_door, "/v1/ask", "rmk_nosuchkey_secret", {"question": ANSWERED}), 401, "UNAUTHENTICATED")
    basic = requests.post(
        f"{front_door}/v1/ask", json={"question": ANSWERED}, headers={"Authorization": "Basic eDp5"}, timeout=30
    )
    assert "Bearer" in error_of(basic, 401, "UNAUTHENTICATED")
    # A key of one tenant naming another.
    other = mesh.key_for("http-other")
    denied = post(front_door, "/v1/ask", other, {"question": ANSWERED, "tenant_id": TENANT})
    assert TENANT in error_of(denied, 403, "PERMISSION_DENIED")
    assert "question" in error_of(post(front_door, "/v1/ask", key, {"question": "  "}), 400, "INVALID_ARGUMENT")
    error_of(get(front_door, "/v1/chunks/no-such-chunk", key), 404, "NOT_FOUND")
    # Bodies the front door refuses before the gateway sees them, in the same shape.
    assert "top_k" in error_of(
        post(front_door, "/v1/search", key, {"query": "x", "top_k": "many"}), 400, "INVALID_ARGUMENT"
    )
    assert "rating" in error_of(
        post(front_door, "/v1/feedback", key, {"answer_id": "a", "rating": "meh"}), 400, "INVALID_ARGUMENT"
    )
    # A misspelt field is refused, naming it, not dropped: "filter" would otherwise ask with no filter at all.
    misspelt = {"question": ANSWERED, "filter": {"document_ids": ["nowhere"]}}
    assert error_of(post(front_door, "/v1/ask", key, misspelt), 400, "INVALID_ARGUMENT") == (
        "filter: not a field of this request"
    )
    nested = {"query": "x", "filters": {"document_id": ["nowhere"]}}
    assert "filters.document_id" in error_of(post(front_door, "/v1/search", key, nested), 400, "INVALID_ARGUMENT")
    broken = requests.post(
        f"{front_door}/v1/ask",
        data=b'{"question": "x",}',
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert "not valid JSON" in error_of(broken, 400, "INVALID_ARGUMENT")
    error_of(get(front_door, "/v1/no-such-route", key), 404, "NOT_FOUND")


def test_request_size_limits(front_door, key):
    big = {"question": "x" * (1024 * 1024)}
    assert "limit" in error_of(post(front_door, "/v1/ask", key, big), 413, "RESOURCE_EXHAUSTED")

    def chunked():  # no Content-Length: the front door counts the bytes as they come
        yield b'{"question": "'
        for _ in range(20):
            yield b"y" * 65536
        yield b'"}'

    reply = requests.post(
        f"{front_door}/v1/ask",
        data=chunked(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        timeout=60,
    )
    error_of(reply, 413, "RESOURCE_EXHAUSTED")


def test_a_front_door_without_its_gateway_is_not_ready_and_answers_503(tmp_path, mesh, key):
    port = free_port()
    env = {**mesh.env(), "RAGMESH_GATEWAY_ADDR": f"127.0.0.1:{free_port()}"}  # nothing listens there
    log_path = tmp_path / "http.log"
    proc = start_front_door(env, port, log_path)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(url, proc, log_path, ready=False)
        ready = requests.get(f"{url}/readyz", timeout=10)
        assert ready.status_code == 503 and ready.json()["gateway_status"].startswith("UNREACHABLE")
        error_of(post(url, "/v1/ask", key, {"question": ANSWERED}), 503, "UNAVAILABLE")
    finally:
        proc.terminate()
        proc.wait(30)
