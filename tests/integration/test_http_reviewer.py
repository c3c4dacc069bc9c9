"""The reviewer page in a real headless Chromium (Debian's, `make chromium`) driven by Playwright: ask, click a
citation and find exactly the cited span highlighted in its section, send a thumbs-down with an expected
document and a comment, and find it in the gateway's answer log; an abstention shows its suggested reading."""

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from tests.support.mesh import TENANT, answer_log

pytestmark = pytest.mark.integration

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def page(front_door):
    if not os.path.exists(CHROMIUM):
        pytest.fail("no chromium: `make chromium` installs Debian's package")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        tab = browser.new_page(viewport={"width": 1400, "height": 900})
        yield tab
        browser.close()


def ask(page: Page, question: str) -> dict:
    page.fill("#question", question)
    with page.expect_response(lambda r: r.url.endswith("/v1/ask")) as response:
        page.click("#ask")
    assert response.value.ok, response.value.text()
    return response.value.json()


def test_ask_open_a_citation_and_send_feedback(page, front_door, ingested, mesh, tmp_path):
    page.goto(f"{front_door}/review")
    page.fill("#api-key", mesh.key_for(TENANT))
    reply = ask(page, "how much is the Team plan per month")
    citations = reply["answer"]["citations"]
    assert citations and not reply["answer"]["abstained"]
    expect(page.locator("#answer-text a.cite")).to_have_count(len(citations))

    # The second citation: its span is not at the start of the chunk, so the offsets must be applied.
    index = 2 if len(citations) > 1 else 1
    cited = citations[index - 1]
    with page.expect_response(lambda r: "/v1/chunks/" in r.url) as response:
        page.click(f"#answer-text a.cite[data-index='{index}']")
    view = response.value.json()
    chunk = view["chunk"]
    at = view["highlight_start"] + cited["char_start"] - chunk["char_start"]
    expected = chunk["section_text"][at : at + cited["char_end"] - cited["char_start"]]
    assert expected == cited["quote"]
    mark = page.locator("#passage-section mark#cited-span")
    expect(mark).to_have_text(expected)
    assert mark.text_content() == expected  # exactly, whitespace included
    # The highlight sits at that offset of the section, not merely somewhere with the same text.
    assert (
        page.evaluate("document.querySelector('#passage-section').firstChild.textContent") == chunk["section_text"][:at]
    )
    expect(page.locator("#passage-document")).to_have_text(cited["document_id"])
    expect(page.locator("#passage-version")).to_have_text(cited["version"])
    expect(page.locator("#passage-effective")).to_contain_text(chunk["meta"]["effective_from"])
    screenshot = Path(os.environ.get("REVIEWER_SCREENSHOT", tmp_path / "reviewer.png"))
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(screenshot), full_page=True)

    page.click("#thumbs-down")
    page.fill("#expected-document", "pricing/discounts")
    page.fill("#comment", "wanted the annual price")
    page.click("#send-feedback")
    expect(page.locator("#feedback-status")).to_contain_text("Feedback stored (")
    feedback_id = page.locator("#feedback-status").inner_text().split("(")[1].rstrip(").")
    rows = {r["feedback_id"]: r for r in answer_log(mesh.data_dir).feedback_rows()}
    row = rows[feedback_id]
    assert (row["answer_id"], row["rating"], row["expected_document_id"], row["comment"]) == (
        reply["answer_id"],
        "RATING_THUMBS_DOWN",
        "pricing/discounts",
        "wanted the annual price",
    )


def test_an_abstention_shows_suggested_reading(page, front_door, ingested, mesh):
    page.goto(f"{front_door}/review")
    page.fill("#api-key", mesh.key_for(TENANT))
    reply = ask(page, "what is the parental leave policy")
    assert reply["answer"]["abstained"]
    expect(page.locator("#abstention")).to_be_visible()
    expect(page.locator("#missing")).to_contain_text(reply["answer"]["missing"])
    suggested = page.locator("#suggested li")
    expect(suggested).to_have_count(len(reply["suggested_reading"]))
    first = reply["suggested_reading"][0]["chunk"]
    expect(suggested.first).to_contain_text(f"{first['meta']['document_id']}@{first['meta']['version']}")
    suggested.first.locator("a").click()
    expect(page.locator("#passage-document")).to_have_text(first["meta"]["document_id"])
    expect(page.locator("#passage-section mark#cited-span")).to_have_text(first["body"])


def test_a_misspelled_question_says_how_it_was_read(page, front_door, ingested, mesh):
    page.goto(f"{front_door}/review")
    page.fill("#api-key", mesh.key_for(TENANT))
    reply = ask(page, "wat is the refund polcy for anual plans")
    assert reply["read_as"] == "wat is the refund policy for annual plans" and not reply["answer"]["abstained"]
    expect(page.locator("#read-as")).to_have_text(f"Read as: {reply['read_as']}")
    # Each citation named as the CLI and the chat door name it: title, then section path.
    first = reply["answer"]["citations"][0]
    expect(page.locator("#citations li").first).to_contain_text(" > ".join(first["heading_path"]))
    ask(page, "what is the refund policy for annual plans")
    expect(page.locator("#read-as")).to_be_hidden()


def test_a_reviewer_names_scopes_to_read_and_open_confidential_passages(page, front_door, ingested, mesh):
    """The page read public documents only, so an hr reviewer could neither get nor open an hr answer."""
    from shared.keys import KEYS_FILE, KeyStore

    _, token = KeyStore(os.path.join(mesh.data_dir, KEYS_FILE)).create(TENANT, ["hr-confidential"], "reader")
    page.goto(f"{front_door}/review")
    page.fill("#api-key", token)
    page.fill("#scopes", "hr-confidential")
    reply = ask(page, "what is the retention bonus for engineers")
    assert {c["document_id"] for c in reply["answer"]["citations"]} == {"handbook/salary-bands"}, reply["answer"]
    with page.expect_response(lambda r: "/v1/chunks/" in r.url) as response:
        page.click("#answer-text a.cite[data-index='1']")
    assert response.value.ok and "access_scopes=hr-confidential" in response.value.url
    expect(page.locator("#passage-document")).to_have_text("handbook/salary-bands")
    page.fill("#scopes", "")  # the page keeps it for the next visit; the other tests read public only
    page.locator("#scopes").dispatch_event("change")


def test_the_page_keeps_the_key_for_its_tab_only_and_runs_under_its_policy(page, front_door, ingested, mesh):
    """A key kept in localStorage was there for whoever opened the page next on that machine; the page runs
    under a policy that lets it load nothing but its own files and refuses to be framed."""
    violations: list[str] = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    page.evaluate("localStorage.setItem('ragmesh-api-key', 'rmk_left_by_an_older_page')")
    response = page.goto(f"{front_door}/review")
    assert response is not None
    headers = response.headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"
    assert page.evaluate("localStorage.getItem('ragmesh-api-key')") is None
    key = mesh.key_for(TENANT)
    page.fill("#api-key", key)
    page.locator("#api-key").dispatch_event("change")
    assert not ask(page, "whats E-4412")["answer"]["abstained"]  # the policy lets the page do its work
    assert page.evaluate("sessionStorage.getItem('ragmesh-api-key')") == key
    assert key not in page.evaluate("JSON.stringify(localStorage)")
    assert violations == []
