import pytest

from services.evaluation.compare import compare


def _report(values):
    return {"cases": [{"id": str(i), "ndcg@10": v, "recall@5": v} for i, v in enumerate(values)]}


def test_a_consistent_gain_has_an_interval_above_zero():
    base = _report([0.5] * 60)
    new = _report([0.6 if i % 4 else 0.5 for i in range(60)])
    r = compare(base, new)["ndcg@10"]
    assert r["diff"] == pytest.approx(0.075)
    assert r["ci95"][0] > 0 and r["better"] == 45 and r["worse"] == 0


def test_noise_around_zero_is_not_a_gain():
    base = _report([0.5] * 60)
    new = _report([0.7 if i % 2 else 0.3 for i in range(60)])
    low, high = compare(base, new)["ndcg@10"]["ci95"]
    assert low < 0 < high


def test_only_shared_queries_are_compared_and_none_shared_is_an_error():
    base, new = _report([0.2, 0.4]), _report([0.4])
    assert compare(base, new)["queries"] == 1
    with pytest.raises(ValueError, match="share no query"):
        compare(_report([]), new)
