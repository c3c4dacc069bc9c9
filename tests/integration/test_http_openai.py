"""The official `openai` client against the front door's /v1/chat/completions: a cited answer, the same answer
streamed, an abstention as a normal completion, a follow-up read with the question before it (or as that question
about another amount or table row), the model list, and errors as the client's own exceptions."""

import re

import openai
import pytest

from shared.text import heading_prefix
from tests.support.mesh import TENANT

pytestmark = pytest.mark.integration

ANSWERED = "how much is the Team plan per month"


@pytest.fixture(scope="module")
def chat(front_door, mesh) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{front_door}/v1", api_key=mesh.key_for(TENANT), max_retries=0, timeout=120)


def ask(chat: openai.OpenAI, question: str, model: str = "ragmesh", **kwargs):
    return chat.chat.completions.create(model=model, messages=[{"role": "user", "content": question}], **kwargs)


def test_a_cited_answer(chat, ingested):
    completion = ask(chat, ANSWERED)
    content = completion.choices[0].message.content
    citations = completion.model_extra["citations"]
    assert completion.choices[0].finish_reason == "stop" and completion.model == "ragmesh"
    assert citations and not completion.model_extra["ragmesh"]["abstained"]
    assert any(c["document_id"] == "pricing/price-list" and "$79" in c["quote"] for c in citations)
    for cite in citations:  # every citation numbered in the text and listed with its quote under Sources
        assert f"[{cite['index']}]" in content.split("Sources:")[0]
        assert f"[{cite['index']}] {cite['document_id']}@{cite['version']}" in content
        assert cite["quote"] in content
        assert cite["char_end"] - cite["char_start"] == len(cite["quote"])
        # Each source names its document, also one without headings (pricing/discounts, a plain text).
        source = next(line for line in content.splitlines() if line.startswith(f"[{cite['index']}] "))
        assert cite["title"] and heading_prefix(cite["title"], cite.get("heading_path", [])) in source


def test_the_same_answer_streamed(chat, ingested):
    whole = ask(chat, ANSWERED).choices[0].message.content
    chunks = list(ask(chat, ANSWERED, stream=True))
    assert len(chunks) > 3 and chunks[0].choices[0].delta.role == "assistant"
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert streamed == whole
    assert [c.choices[0].finish_reason for c in chunks][-1] == "stop"
    assert chunks[-1].model_extra["citations"] and chunks[-1].model_extra["citations"][0]["index"] == 1


def test_an_answer_from_a_past_version_says_which_versions_were_searched(chat, ingested):
    completion = ask(chat, "in 2025 who approved a refund above 5k")
    content = completion.choices[0].message.content
    assert "2025-12-31" in completion.model_extra["ragmesh"]["time_reference"]
    assert "Searched: versions in force at 2025-12-31" in content
    assert "Searched:" not in ask(chat, ANSWERED).choices[0].message.content


def test_an_abstention_is_a_completion_with_suggested_reading(chat, ingested):
    completion = ask(chat, "what is the parental leave policy", model=f"ragmesh:{TENANT}")
    content = completion.choices[0].message.content
    reading = completion.model_extra["suggested_reading"]
    assert completion.model_extra["ragmesh"]["abstained"] and completion.model_extra["citations"] == []
    assert content.startswith("I cannot answer this from the documents: ") and "Suggested reading:" in content
    assert len(reading) == 3
    for item in reading:  # each named as a source is: the document, its title, then its section path
        where = heading_prefix(item["title"], item["heading_path"])
        assert f"- {item['document_id']}@{item['version']}: {where}\n" in content + "\n"
    assert not re.search(r"\[\d+\]", content)
    assert "answered from the documents on its own" not in content  # a first question


def test_an_abstained_later_message_asked_alone_says_so(chat, ingested):
    """A chat client sends the whole conversation; a message that names a topic of its own is asked alone, and
    if it is refused the reply says the conversation was not read, so a follow-up it missed is asked in full."""
    messages = [
        {"role": "user", "content": ANSWERED},
        {"role": "assistant", "content": "The Team plan is $79 per month."},
        {"role": "user", "content": "and what about the parental leave policy"},
    ]
    completion = chat.chat.completions.create(model="ragmesh", messages=messages)
    content = completion.choices[0].message.content
    assert completion.model_extra["ragmesh"]["abstained"] and completion.model_extra["ragmesh"]["asked_as"] == ""
    assert content.endswith("if it follows up an earlier question, ask it in full.")
    messages[-1]["content"] = "how much is the Business plan per month"
    answered = chat.chat.completions.create(model="ragmesh", messages=messages).choices[0].message.content
    assert "on its own" not in answered and "Asked as:" not in answered


def test_a_follow_up_is_asked_with_the_question_before_it(chat, ingested):
    """Asked alone, "and for business customers?" was answered with a ticket's header; read with the question
    it follows, it is answered from the refund policy's business section."""
    first = "what is the consumer refund window"
    messages = [
        {"role": "user", "content": first},
        {"role": "assistant", "content": "Consumers may cancel within 14 days."},
        {"role": "user", "content": "and for business customers?"},
    ]
    for streamed in (False, True):
        if streamed:
            chunks = list(chat.chat.completions.create(model="ragmesh", messages=messages, stream=True))
            content = "".join(c.choices[0].delta.content or "" for c in chunks)
            extra = chunks[-1].model_extra
        else:
            completion = chat.chat.completions.create(model="ragmesh", messages=messages)
            content, extra = completion.choices[0].message.content, completion.model_extra
        asked = f"{first}; for business customers?"
        assert extra["ragmesh"]["asked_as"] == asked and f"Asked as: {asked}" in content
        assert not extra["ragmesh"]["abstained"]
        assert any(
            c["document_id"] == "handbook/refund-policy" and "Business customers" in c["quote"]
            for c in extra["citations"]
        ), extra["citations"]


@pytest.mark.parametrize(
    "first, follow_up, quoted",
    [
        # Composed, "and 200?" was answered with "more than 200 seats get 10% off": it asks about a 200 refund.
        ("who approves a 3000 refund", "and 200?", "Refunds up to $250 may be approved by any Tier 1 support agent."),
        # Composed, "and business?" was answered with the Team row again: the price list sets Business beside Team.
        ("how much is the Team plan per month", "and business?", "| Business | $299 | $2,990 |"),
    ],
)
def test_a_follow_up_swapping_what_the_question_asks_about_is_answered_for_it(chat, ingested, first, follow_up, quoted):
    messages = [
        {"role": "user", "content": first},
        {"role": "assistant", "content": "..."},
        {"role": "user", "content": follow_up},
    ]
    completion = chat.chat.completions.create(model="ragmesh", messages=messages)
    extra = completion.model_extra
    assert not extra["ragmesh"]["abstained"], completion.choices[0].message.content
    assert quoted in extra["citations"][0]["quote"], extra["citations"]


def test_a_refused_follow_up_is_asked_alone_before_it_is_refused(chat, ingested):
    """Read with the question that started the chain, "what about annual plans?" was refused; asked alone it is
    answered from the refund policy's annual plans section, and that answer is the one given."""
    messages = []
    for said in ("what is the consumer refund window", "and for business customers?", "what about annual plans?"):
        messages += [{"role": "user", "content": said}, {"role": "assistant", "content": "..."}]
    completion = chat.chat.completions.create(model="ragmesh", messages=messages[:-1])
    extra = completion.model_extra
    assert not extra["ragmesh"]["abstained"], completion.choices[0].message.content
    assert any(
        c["document_id"] == "handbook/refund-policy" and "Annual plans" in c["quote"] for c in extra["citations"]
    )


def test_models_and_errors(chat, ingested, front_door):
    assert [m.id for m in chat.models.list()] == ["ragmesh"]
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        ask(chat, ANSWERED, model="gpt-4o")
    with pytest.raises(openai.PermissionDeniedError):
        ask(chat, ANSWERED, model="ragmesh:someone-else")
    with pytest.raises(openai.BadRequestError, match="question"):
        chat.chat.completions.create(model="ragmesh", messages=[{"role": "user", "content": " "}])
    with pytest.raises(openai.BadRequestError, match="n:"):  # one answer per question, not n copies of it
        chat.chat.completions.create(model="ragmesh", messages=[{"role": "user", "content": ANSWERED}], n=2)
    anonymous = openai.OpenAI(base_url=f"{front_door}/v1", api_key="rmk_nosuchkey_secret", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        ask(anonymous, ANSWERED)


def test_a_key_reads_its_scopes_when_the_request_names_them(front_door, mesh, ingested):
    """Through this door only public documents could be read: an hr key could never reach an hr document."""
    import os

    from shared.keys import KEYS_FILE, KeyStore

    keys = KeyStore(os.path.join(mesh.data_dir, KEYS_FILE))

    def client(scopes) -> openai.OpenAI:
        _, token = keys.create(TENANT, scopes, "reader")
        return openai.OpenAI(base_url=f"{front_door}/v1", api_key=token, max_retries=0, timeout=120)

    hr = client(["hr-confidential"])
    question = "what is the retention bonus for engineers"
    named = ask(hr, question, extra_body={"access_scopes": ["hr-confidential"]})
    assert not named.model_extra["ragmesh"]["abstained"], named.choices[0].message.content
    assert {c["document_id"] for c in named.model_extra["citations"]} == {"handbook/salary-bands"}
    public = ask(hr, question)  # naming none reads public documents only, as /v1/ask does
    assert "handbook/salary-bands" not in {c["document_id"] for c in public.model_extra["citations"]}
    with pytest.raises(openai.PermissionDeniedError, match="hr-confidential"):
        ask(client(["support"]), question, extra_body={"access_scopes": ["hr-confidential"]})
