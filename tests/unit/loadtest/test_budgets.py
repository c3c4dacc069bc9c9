"""The latency budgets are one file: the alert rules in alerts.yml are generated from it and must not drift."""

import pytest

from loadtest import budgets


def test_alerts_yml_holds_exactly_the_rules_budgets_yaml_generates():
    assert budgets.drift(budgets.load(), budgets.ALERTS_FILE.read_text()) == []


def test_a_changed_budget_is_drift(tmp_path):
    changed = tmp_path / "budgets.yaml"
    changed.write_text(budgets.BUDGETS_FILE.read_text().replace("p95: 0.25", "p95: 0.3"))
    differences = budgets.drift(budgets.load(changed), budgets.ALERTS_FILE.read_text())
    assert any("> 0.3" in line and line.startswith("+") for line in differences)
    assert any("> 0.25" in line and line.startswith("-") for line in differences)


def test_write_regenerates_only_the_marked_block(tmp_path):
    alerts = tmp_path / "alerts.yml"
    original = budgets.ALERTS_FILE.read_text()
    alerts.write_text(original.replace("> 0.25", "> 9"))
    assert budgets.main(["check", "--alerts", str(alerts)]) == 1
    assert budgets.main(["write", "--alerts", str(alerts)]) == 0
    assert alerts.read_text() == original


@pytest.mark.parametrize(
    "text, problem",
    [
        ("stages: {retrieve: {p50: 0.2, p95: 0.1, p99: 0.5}}", "p50 <= p95 <= p99"),
        ("stages: {retrieve: {p50: 0.1, p95: 0.2}}", "lacks p99"),
    ],
)
def test_bad_budgets_are_refused_naming_the_entry(tmp_path, text, problem):
    path = tmp_path / "budgets.yaml"
    path.write_text(text + "\nrpcs: {}\nalerts: {quantile: p95, window: 5m, for: 10m, severity: warning}\n")
    with pytest.raises(ValueError, match=problem) as err:
        budgets.load(path)
    assert "stages.retrieve" in str(err.value)


def test_budget_durations_read_as_the_summaries_write_them():
    assert [budgets.human(s) for s in (0.25, 1.0, 2.5, 0.5)] == ["250ms", "1s", "2.5s", "500ms"]


def test_every_shipped_budget_is_a_histogram_bucket_boundary():
    assert budgets.off_bucket(budgets.load()) == []


def test_a_budget_between_buckets_is_reported(tmp_path):
    changed = tmp_path / "budgets.yaml"
    changed.write_text(budgets.BUDGETS_FILE.read_text().replace("p95: 0.25", "p95: 0.3"))
    assert budgets.off_bucket(budgets.load(changed)) == ["stages.retrieve.p95 = 0.3 s"]
    assert budgets.main(["check", "--budgets", str(changed)]) == 1  # the alerts disagree too
