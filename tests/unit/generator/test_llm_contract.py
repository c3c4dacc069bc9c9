import json

import pytest

from services.generator.llm import LLMGenerator
from services.generator.prompt import build_messages, parse_reply, prompt_context
from shared.model import ScoredChunk, StageScores
from tests.conformance.index_suite import chunk, meta


class ScriptedBackend:
    """Replays a fixed model output: these tests check the contract around the model, not a model."""

    model_id = "scripted"

    def __init__(self, reply: str):
        self.reply = reply
        self.messages = None

    def warm_up(self):
        pass

    def complete(self, messages, schema, max_tokens):
        self.messages = messages
        return self.reply


def passages():
    out = []
    for i, body in enumerate(["The refund window is 14 days. Fees apply.", "Team costs $79 per month."]):
        c = chunk(meta(doc=f"d{i}"), 0, body)
        c.char_start, c.char_end, c.section_text = 10, 10 + len(body), "# Section\n\n" + body
        out.append(ScoredChunk(c, StageScores()))
    return out


def test_prompt_numbers_passages_and_maps_ids_back():
    messages, ids = build_messages("refund window?", passages(), 400)
    assert "[P1]" in messages[1]["content"] and "[P2]" in messages[1]["content"]
    assert ids == {"P1": passages()[0].chunk.chunk_id, "P2": passages()[1].chunk.chunk_id}
    assert "ONLY" in messages[0]["content"]


def test_section_is_passed_when_it_fits_else_the_chunk():
    p = passages()[0]
    assert prompt_context(p, 400).startswith("# Section")
    p.chunk.section_text = "x" * 100_000
    assert prompt_context(p, 400) == p.chunk.body


def test_cited_passage_ids_become_chunk_ids_with_the_supporting_span():
    reply = json.dumps({"answer": "14 days", "citations": ["P1"], "not_in_context": False, "missing": ""})
    answer = LLMGenerator(ScriptedBackend(reply)).run("refund window?", passages())
    cite = answer.citations[0]
    assert not answer.abstained and cite.chunk_id == passages()[0].chunk.chunk_id
    assert cite.quote == "The refund window is 14 days." and cite.char_start == 10


def test_an_invented_id_is_passed_through_for_the_gateway_to_reject():
    reply = json.dumps({"answer": "x", "citations": ["P9"], "not_in_context": False, "missing": ""})
    answer = LLMGenerator(ScriptedBackend(reply)).run("q", passages())
    assert [c.chunk_id for c in answer.citations] == ["P9"]


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("Sure! The answer is 14 days.", "unparseable_output"),
        ('{"answer": "", "citations": [], "not_in_context": true, "missing": "parental leave"}', "not_in_context"),
    ],
)
def test_unparseable_or_not_in_context_become_abstentions(reply, reason):
    answer = LLMGenerator(ScriptedBackend(reply)).run("q", passages())
    assert answer.abstained and answer.reason.startswith(reason)


def test_parse_reply_tolerates_text_around_the_object():
    assert parse_reply('here: {"answer": "a", "citations": ["P1"]} done')["citations"] == ["P1"]
