import math

import pytest

from services.evaluation import gate
from services.evaluation import metrics as m


def test_rank_metrics_on_a_hand_worked_example():
    ranks = {"a": 2, "b": 7}  # gold c never retrieved
    gold = ["a", "b", "c"]
    assert m.recall_at(ranks, gold, 1) == 0
    assert m.recall_at(ranks, gold, 5) == pytest.approx(1 / 3)
    assert m.recall_at(ranks, gold, 10) == pytest.approx(2 / 3)
    assert m.hit_at(ranks, gold, 5) == 1.0
    assert m.mrr_at(ranks, gold, 10) == 0.5
    assert m.mrr_at(ranks, gold, 1) == 0.0
    dcg = 1 / math.log2(3) + 1 / math.log2(8)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert m.ndcg_at(ranks, {"a": 1, "b": 1, "c": 1}, 10) == pytest.approx(dcg / idcg)
    assert m.precision_at([False, True, False, False, True], 5) == 0.4


def test_paired_bootstrap_interval_excludes_zero_only_for_a_real_gain():
    base = [0.5] * 200
    mean, low, high = m.paired_bootstrap(base, [0.6] * 100 + [0.5] * 100)
    assert mean == pytest.approx(0.05) and low > 0
    mean, low, high = m.paired_bootstrap(base, [0.6, 0.4] * 100)
    assert low < 0 < high


def test_gate_names_the_metric_and_the_size_of_the_regression():
    baseline = {"recall@5": 0.90, "false_answer_rate": 0.10, "ndcg@10": 0.80}
    assert (
        gate.compare(
            {"recall@5": 0.885, "false_answer_rate": 0.115, "ndcg@10": 0.9},
            baseline,
            ["recall@5", "false_answer_rate", "ndcg@10"],
        )
        == []
    )
    failures = gate.compare(
        {"recall@5": 0.85, "false_answer_rate": 0.2, "ndcg@10": 0.8},
        baseline,
        ["recall@5", "false_answer_rate", "ndcg@10"],
    )
    assert failures == [
        "recall@5 regressed from 0.900 to 0.850 (5.0 points worse; allowed 2.0)",
        "false_answer_rate regressed from 0.100 to 0.200 (10.0 points worse; allowed 2.0)",
    ]


def test_ndcg_never_exceeds_one_when_gold_items_share_a_chunk():
    # Both gold spans in the top chunk: a perfect list, not 1.23 (each counted at rank 1).
    assert m.ndcg_at({"a": 1, "b": 1}, {"a": 1, "b": 1}, 10) == pytest.approx(1.0)
    # The higher gain takes the shared rank; the other the next slot, which pushes a later item down.
    shared = m.ndcg_at({"a": 2, "b": 2, "c": 3}, {"a": 1, "b": 2, "c": 1}, 10)
    dcg = 2 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    idcg = 2 + 1 / math.log2(3) + 1 / math.log2(4)
    assert shared == pytest.approx(dcg / idcg)
    # Slots past k do not count.
    assert m.ndcg_at({"a": 1, "b": 1}, {"a": 1, "b": 1}, 1) == pytest.approx(1.0)
    second = 1 / math.log2(3)
    assert m.ndcg_at({"a": 2, "b": 2}, {"a": 1, "b": 1}, 2) == pytest.approx(second / (1 + second))
