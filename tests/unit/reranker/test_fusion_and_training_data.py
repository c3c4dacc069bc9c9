"""The reranker's fusion with the first stage, and how training groups are built (no model needed)."""

import random
from types import SimpleNamespace

import numpy as np
import pytest

from services.reranker import fusion
from services.reranker.training import data


def test_weight_zero_keeps_the_first_stage_order():
    scores = np.array([0.1, 0.9, 0.5, 0.7])
    assert fusion.fused_order([1, 2, 3, 4], scores, 0.0) == [0, 1, 2, 3]


def test_a_huge_weight_is_the_cross_encoder_order():
    scores = np.array([0.1, 0.9, 0.5, 0.7])
    assert fusion.fused_order([1, 2, 3, 4], scores, fusion.RERANKER_ONLY) == [1, 3, 2, 0]


def test_equal_weight_moves_a_strong_rerank_up_but_not_a_weak_one_past_the_top():
    # Item 3 is first for the cross-encoder and 4th in the first stage; item 0 is 1st and 2nd.
    scores = np.array([0.8, 0.1, 0.2, 0.9])
    order = fusion.fused_order([1, 2, 3, 4], scores, 1.0)
    assert order[0] == 0 and order[1] == 3


def test_score_ties_fall_back_to_the_first_stage_rank():
    assert fusion.ranks_of(np.array([0.5, 0.5, 0.9]), [2, 1, 3]) == [3, 2, 1]


def _query(qid, gold, n=12):
    return data.Query(
        qid,
        f"question {qid}",
        {gold: 1.0},
        [data.Candidate(f"{qid}-d{i}", f"passage {qid}-{i}", i + 1) for i in range(n)],
    )


def test_groups_put_the_positive_first_and_never_a_relevant_document_among_the_negatives():
    queries = [_query(f"q{i}", f"q{i}-d3") for i in range(5)]
    groups = data.groups(queries, negatives=6, rng=random.Random(1))
    assert len(groups) == 5
    for q, g in zip(queries, groups, strict=True):
        assert len(g.passages) == 8
        assert g.passages[0] == f"passage {q.query_id}-3"
        assert f"passage {q.query_id}-3" not in g.passages[1:]


def test_groups_are_reproducible_with_the_seed():
    queries = [_query(f"q{i}", f"q{i}-d0") for i in range(4)]
    a = data.groups(queries, 6, random.Random(7))
    b = data.groups(queries, 6, random.Random(7))
    assert [g.passages for g in a] == [g.passages for g in b]


def test_a_query_whose_positive_was_not_retrieved_gives_no_group():
    assert data.groups([_query("q", "elsewhere")], 6, random.Random(1)) == []


def test_the_tuning_split_is_stable_and_about_the_asked_fraction():
    ids = [str(i) for i in range(2000)]
    rest, held = data.split_ids(ids, 0.2)
    assert set(rest).isdisjoint(held) and len(rest) + len(held) == len(ids)
    assert 0.17 < len(held) / len(ids) < 0.23
    # Independent of order and of which other ids are present.
    assert data.split_ids(list(reversed(ids)), 0.2)[1] == list(reversed(held))
    assert set(data.split_ids(ids[:500], 0.2)[1]) == {i for i in held if int(i) < 500}


def test_heading_lines_are_removed_from_self_supervised_passages():
    chunk = SimpleNamespace(
        heading_path=["Handbook", "Refund policy"], body="## Refund policy\nRefunds are issued within 14 days."
    )
    assert data._without_headings(chunk) == "Refunds are issued within 14 days."


def test_mined_queries_round_trip(tmp_path):
    queries = [_query("q1", "q1-d2", 3)]
    data.save_queries(tmp_path / "m.jsonl", queries)
    assert data.load_queries(tmp_path / "m.jsonl") == queries


def test_a_passage_retrieved_for_many_queries_is_stored_once(tmp_path):
    shared = data.Candidate("d9", "the same long abstract " * 50, 1)
    queries = [
        data.Query(f"q{i}", f"question {i}", {"d9": 1.0}, [shared, data.Candidate(f"x{i}", f"other {i}", 2)])
        for i in range(20)
    ]
    data.save_queries(tmp_path / "m.jsonl", queries)
    lines = (tmp_path / "m.jsonl").read_text().splitlines()
    assert sum("the same long abstract" in line for line in lines) == 1
    assert data.load_queries(tmp_path / "m.jsonl") == queries


def test_files_with_inline_candidate_texts_still_load(tmp_path):
    import dataclasses
    import json

    queries = [_query("q1", "q1-d2", 3)]
    (tmp_path / "old.jsonl").write_text("\n".join(json.dumps(dataclasses.asdict(q)) for q in queries) + "\n")
    assert data.load_queries(tmp_path / "old.jsonl") == queries


def test_sentences_split_at_sentence_ends_only():
    text = "Mice lacking IL-6 were studied (n = 12). Results differed, e.g. at 3.5 mg. [Note] It held."
    assert data.sentences(text) == [
        "Mice lacking IL-6 were studied (n = 12).",
        "Results differed, e.g. at 3.5 mg.",
        "[Note] It held.",
    ]


def test_cloze_cuts_the_query_sentence_out_of_the_positive_and_keeps_everything_else():
    body = (
        "Background sentence one is here today. The drug reduced mortality in elderly patients markedly. "
        "Methods were standard and well described. Conclusions follow from the data shown."
    )
    query, positive = data.cloze("A title", body, random.Random(3))
    assert query in data.sentences(body)
    assert query not in positive and positive.startswith("A title\n")
    assert sorted(data.sentences(positive.split("\n", 1)[1]) + [query]) == sorted(data.sentences(body))


def test_cloze_leaves_short_documents_alone():
    assert data.cloze("T", "Only one sentence here. And two.", random.Random(0)) is None


@pytest.mark.parametrize("weight", fusion.WEIGHT_GRID)
def test_every_weight_in_the_grid_returns_a_permutation(weight):
    order = fusion.fused_order([3, 1, 2], np.array([0.2, 0.3, 0.1]), weight)
    assert sorted(order) == [0, 1, 2]


def test_a_third_signal_adds_its_weighted_rank():
    first, ce, similarity = [1, 2, 3], np.array([0.1, 0.2, 0.3]), np.array([0.1, 0.2, 0.9])
    # Items 0 and 2 tie on first stage + cross-encoder (ranks 1+3 and 3+1): the first stage breaks it...
    assert fusion.fused_order(first, ce, 1.0) == [0, 2, 1]
    # ...unless maxsim ranks item 2 first (and item 0, last, below item 1).
    assert fusion.fused_order(first, ce, 1.0, more=((similarity, 1.0),)) == [2, 1, 0]
    assert fusion.fused_order(first, ce, 1.0, more=((similarity, 0.0),)) == [0, 2, 1]


def test_candidates_a_signal_did_not_score_rank_after_those_it_did():
    similarity = np.array([0.2, -np.inf, 0.5, -np.inf])
    assert fusion.ranks_of(similarity, [1, 2, 3, 4]) == [2, 3, 1, 4]
