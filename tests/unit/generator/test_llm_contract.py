import json

import pytest

from services.gateway.policy import invalid_citations
from services.generator import selection
from services.generator.llm import LLMGenerator
from services.generator.prompt import ANSWER_SCHEMA, build_messages, parse_reply
from shared.model import ScoredChunk, StageScores
from shared.text import answer_units
from tests.conformance.index_suite import chunk, meta


class ScriptedBackend:
    """Replays a fixed model output: these tests check the contract around the model, not a model."""

    model_id = "scripted"

    def __init__(self, reply: str):
        self.reply = reply
        self.messages: list[dict] = []

    def warm_up(self) -> None:
        pass

    def complete(self, messages: list[dict], schema: dict, max_tokens: int) -> str:
        self.messages = messages
        return self.reply


BODIES = [
    "The refund window is 14 days. Fees apply to late refunds.\n\n"
    "- Card refunds take 5 days\n- Bank refunds take 9 days",
    "| Plan | Monthly price |\n|---|---|\n| Team | $79 |\n| Solo | $9 |",
]


def passages() -> list[ScoredChunk]:
    out = []
    for i, body in enumerate(BODIES):
        c = chunk(meta(doc=f"d{i}"), 0, body)
        c.char_start, c.char_end, c.heading_path = 10, 10 + len(body), ["Billing", f"Part {i}"]
        out.append(ScoredChunk(c, StageScores()))
    return out


def reply(*ids: str, answer: str = "an answer") -> str:
    return json.dumps({"answer": answer, "citations": list(ids), "not_in_context": False, "missing": ""})


def prompt_lines(backend: ScriptedBackend) -> dict[str, str]:
    """Unit id -> the line the model read for it."""
    lines = [line for line in backend.messages[1]["content"].splitlines() if line.startswith("[U")]
    return {line[1 : line.index("]")]: line for line in lines}


def test_the_model_reads_numbered_units_under_their_section_and_cites_unit_ids():
    units = selection.candidates("refund window?", passages())
    messages, ids = build_messages("refund window?", units)
    assert list(ids) == [f"U{n}" for n in range(1, len(units) + 1)]
    assert "[U1] d0 > Billing > Part 0: The refund window is 14 days." in messages[1]["content"]
    # A table row is read with its header; the header row and the rule line are no units of their own.
    assert "Part 1: Plan: Team; Monthly price: $79" in messages[1]["content"]
    assert "|---|" not in messages[1]["content"]
    assert ANSWER_SCHEMA["properties"]["citations"]["items"]["pattern"] == "^U[0-9]{1,2}$"
    assert "ONLY" in messages[0]["content"] and '"U1"' in messages[0]["content"]


def test_shortlist_is_bounded_puts_the_best_evidence_in_and_keeps_reading_order():
    units = selection.candidates("how long do bank refunds take", passages())
    picked = selection.shortlist(units, 2, 10_000)
    texts = [units[i].text for i in picked]
    assert len(picked) == 2 and any("Bank refunds take 9 days" in t for t in texts), texts
    assert picked == sorted(picked, key=lambda i: (units[i].passage, units[i].start))
    # The character budget binds as well as the count.
    small = selection.shortlist(units, 8, 80)
    assert small and sum(len(units[i].text) for i in small) <= 80
    assert len(selection.shortlist(units, 8, 10_000)) == min(8, len(units))


def test_cited_unit_ids_become_exact_unit_spans_that_the_gateway_accepts():
    backend = ScriptedBackend("")
    generator = LLMGenerator(backend)
    generator.run("refund window?", passages())  # to read the prompt it builds
    lines = prompt_lines(backend)
    window = next(uid for uid, line in lines.items() if "refund window is 14 days" in line)
    team = next(uid for uid, line in lines.items() if "Team" in line)
    backend.reply = reply(window, team, window)
    answer = generator.run("refund window?", passages())
    assert not answer.abstained and len(answer.citations) == 2  # a repeated id is one citation
    first, second = answer.citations
    ctx = passages()
    assert first.chunk_id == ctx[0].chunk.chunk_id and first.quote == "The refund window is 14 days."
    assert (first.char_start, first.char_end) == (10, 10 + len(first.quote))
    assert second.chunk_id == ctx[1].chunk.chunk_id and second.quote == "| Team | $79 |"
    for c in answer.citations:
        body = next(p.chunk.body for p in ctx if p.chunk.chunk_id == c.chunk_id)
        assert (c.char_start - 10, c.char_end - 10) in answer_units(body)
    assert invalid_citations(answer.citations, {p.chunk.chunk_id: p.chunk for p in ctx}) == ""


def test_the_prompt_stays_bounded_however_long_the_passages():
    long_passages = passages()
    long_passages[0].chunk.body = " ".join(f"Refund rule {n} applies to orders." for n in range(400))
    backend = ScriptedBackend(reply("U1"))
    generator = LLMGenerator(backend, section_token_budget=50, max_passages=2, max_units=8)
    generator.run("which refund rule applies", long_passages)
    lines = prompt_lines(backend)
    assert 0 < len(lines) <= 8 and sum(len(line) for line in lines.values()) <= 4 * 50 * 2 + 8 * 6


def test_an_invented_unit_id_is_passed_through_for_the_gateway_to_reject():
    ctx = passages()
    answer = LLMGenerator(ScriptedBackend(reply("U99"))).run("refund window?", ctx)
    assert [c.chunk_id for c in answer.citations] == ["U99"]
    problem = invalid_citations(answer.citations, {p.chunk.chunk_id: p.chunk for p in ctx})
    assert problem.startswith("cited ids not in the context")


@pytest.mark.parametrize(
    "raw, reason",
    [
        ("Sure! The answer is 14 days.", "unparseable_output"),
        ('{"answer": "", "citations": [], "not_in_context": true, "missing": "parental leave"}', "not_in_context"),
    ],
)
def test_unparseable_or_not_in_context_become_abstentions(raw: str, reason: str):
    answer = LLMGenerator(ScriptedBackend(raw)).run("refund window?", passages())
    assert answer.abstained and answer.reason.startswith(reason)


def test_no_passages_means_no_model_call_and_an_abstention():
    backend = ScriptedBackend(reply("U1"))
    answer = LLMGenerator(backend).run("refund window?", [])
    assert answer.abstained and answer.reason == "not_in_context" and not backend.messages


def test_parse_reply_tolerates_text_around_the_object():
    assert parse_reply('here: {"answer": "a", "citations": ["U1"]} done')["citations"] == ["U1"]


def test_parse_reply_reads_a_raw_newline_or_tab_inside_a_string():
    data = parse_reply('{"answer": "Meaning: two clients\nchanged the\tsame file.", "citations": ["U1"]}')
    assert data["answer"] == "Meaning: two clients\nchanged the\tsame file." and data["citations"] == ["U1"]


def test_a_question_naming_nothing_means_no_model_call_and_an_abstention():
    backend = ScriptedBackend(reply("U1"))
    answer = LLMGenerator(backend).run("' OR 1=1 --", passages())
    assert answer.abstained and answer.reason == "empty_question" and not backend.messages
