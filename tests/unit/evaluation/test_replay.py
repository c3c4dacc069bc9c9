import json

from google.protobuf.json_format import MessageToDict

from services.evaluation import replay
from shared import convert
from shared.model import ScoredChunk, StageScores
from tests.conformance.index_suite import chunk, meta

DOC = "---\ndoc_id: policy\nversion: 2026\n---\n# Refunds\n\nRefunds are paid within 14 days of the request.\n"
SENTENCE = "Refunds are paid within 14 days of the request."


def _recorded_context(rerank_score: float) -> dict:
    """The policy's passage as the gateway handed it over, at its offsets in the source file."""
    c = chunk(meta(tenant="t", doc="policy", version="2026"), 0, SENTENCE)
    c.char_start = DOC.index(SENTENCE)
    c.char_end = c.char_start + len(SENTENCE)
    return MessageToDict(convert.scored_to_pb(ScoredChunk(c, StageScores(rerank_score=rerank_score))))


def _files(tmp_path, threshold: float) -> dict:
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "policy.md").write_text(DOC)
    cases = tmp_path / "cases.jsonl"
    gold = [{"doc_id": "policy", "version": "2026", "evidence": SENTENCE}]
    rows = [
        {"id": "q1", "question": "how long until refunds are paid", "tenant": "t", "gold": gold},
        {"id": "q2", "question": "who is the ceo", "tenant": "t", "gold": []},
    ]
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    contexts = tmp_path / "contexts.jsonl"
    contexts.write_text(
        json.dumps({"id": "q1", "context": [_recorded_context(0.9)]})
        + "\n"
        + json.dumps({"id": "q2", "context": [_recorded_context(0.7)]})
        + "\n"
    )
    decision = tmp_path / f"calibration-{threshold}.json"
    decision.write_text(
        json.dumps(
            {
                "threshold": threshold,
                "reranker_model_id": "m",
                "target_false_answer_rate": 0.05,
                "false_answer_rate": 0.0,
                "answered_answerable_rate": 1.0,
                "correct_answerable_rate": 1.0,
                "cases": 2,
            }
        )
    )
    return {
        "cases_file": str(cases),
        "corpus_dirs": [str(corpus)],
        "contexts_file": str(contexts),
        "calibration_file": str(decision),
        "splits": {"train", "dev"},
    }


def test_a_replay_answers_with_the_generator_and_the_decision_and_judges_by_the_gold_span(tmp_path):
    outcomes = replay.replay(**_files(tmp_path, threshold=0.8))
    assert outcomes["q1"].answered and outcomes["q1"].right and "14 days" in outcomes["q1"].text
    assert not outcomes["q2"].answered  # the generator finds nothing on the ceo
    assert replay.summary(outcomes).startswith("2 questions: 1 of 1 answerable answered right, 0 wrong")


def test_changes_name_each_question_whose_outcome_moved(tmp_path):
    before = replay.replay(**_files(tmp_path, threshold=0.8))
    path = tmp_path / "before.json"
    replay.save(before, str(path))
    stricter = replay.replay(**_files(tmp_path, threshold=0.95))  # q1's top score 0.9 is now below the decision
    lines = replay.changes(replay.load(str(path)), stricter)
    assert lines[0].startswith("- q1 right -> refused") and len(lines) == 3
    assert replay.changes(before, before) == []


def test_a_wrapped_replay_asks_each_question_as_the_template_writes_it(tmp_path):
    """The words around a question (a greeting, a sign-off) change nothing the generator reads; a template whose
    words the question then holds as its own would ("ceo" is held by no passage: the answer covers less of it)."""
    files = _files(tmp_path, threshold=0.8)
    plain = replay.replay(**files)
    polite = replay.replay(**files, wrap="Hello, could you please let me know {question}? Thanks!")
    assert replay.changes(plain, polite) == []
    assert polite["q1"].question == plain["q1"].question  # outcomes keep the case's own question
    assert replay.replay(**files, wrap="{question} for the ceo")["q1"].coverage < plain["q1"].coverage


def test_a_slip_falls_in_the_middle_of_the_question_s_longest_word(tmp_path):
    assert replay.with_slip("expense report deadline", "swap") == "expense report dealdine"
    assert replay.with_slip("expense report deadline", "drop") == "expense report deadine"
    assert replay.with_slip("expense report deadline", "double") == "expense report deadlline"
    assert replay.with_slip("p1 ack", "swap") == "p1 ack"  # no word of six letters
    # Replayed with a slip the spelling pass reads back ("reufnds" is "refunds"), q1 is answered as plainly.
    files = _files(tmp_path, threshold=0.8)
    assert replay.changes(replay.replay(**files), replay.replay(**files, slip="swap")) == []
