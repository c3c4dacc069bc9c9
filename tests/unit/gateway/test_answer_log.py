"""The answer log writes an answer and its lineage as one transaction: both or neither. Written in the
background (the gateway's way), every read, feedback and erasure first sees every answer already recorded,
and closing the log writes what is still queued."""

import sqlite3
import time
from pathlib import Path

import pytest

from services.gateway.answer_log import AnswerLog


def _candidates(n: int) -> list[dict]:
    return [
        {
            "chunk_id": f"chunk-{i}",
            "document_id": f"doc-{i % 3}",
            "version": "v1",
            "bm25_rank": i + 1,
            "dense_rank": i + 1,
            "fused_score": 0.5,
            "rerank_score": 0.25,
        }
        for i in range(n)
    ]


def _record(log: AnswerLog, candidates: list[dict], context_ids: list[str], tenant_id: str = "acme") -> str:
    return log.record(
        trace_id="0" * 32,
        tenant_id=tenant_id,
        query="what does the policy say?",
        candidates=candidates,
        context_ids=context_ids,
        answer="it says so",
        cited_ids=context_ids[:1],
        abstained=False,
        reason="",
        prompt_tokens=42,
        reranker_model_id="maxsim",
        degraded=False,
        access_scopes=["public", "hr"],
    )


def _counts(path: Path) -> tuple[int, int]:
    """Rows as another connection (another process) sees them: only what was committed."""
    with sqlite3.connect(path) as conn:
        answers = conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
        lineage = conn.execute("SELECT COUNT(*) FROM answer_chunks").fetchone()[0]
    return answers, lineage


def test_answer_and_lineage_are_committed_together(tmp_path):
    path = tmp_path / "answers.sqlite"
    log = AnswerLog(str(path))
    log.warm_up()
    answer_id = _record(log, _candidates(50), ["chunk-0", "chunk-1"])
    # 50 candidates + 2 context + 1 cited, visible to a reader outside this connection.
    assert _counts(path) == (1, 53)
    assert log.answer("acme", answer_id)["query"] == "what does the policy say?"


def test_an_answer_keeps_the_scopes_it_was_asked_with_and_an_old_log_gains_the_column(tmp_path):
    path = tmp_path / "answers.sqlite"
    log = AnswerLog(str(path))
    log.warm_up()
    answer_id = _record(log, _candidates(2), ["chunk-0"])
    assert log.answer("acme", answer_id)["access_scopes"] == '["hr"]'  # public is every key's: not kept

    old = tmp_path / "old.sqlite"  # a log from before answers recorded their scopes
    with sqlite3.connect(old) as conn:
        conn.execute(
            "CREATE TABLE answers (answer_id TEXT PRIMARY KEY, trace_id TEXT NOT NULL, created_at REAL NOT NULL, "
            "tenant_id TEXT NOT NULL, query TEXT NOT NULL, candidates TEXT NOT NULL, context_ids TEXT NOT NULL, "
            "answer TEXT NOT NULL, cited_ids TEXT NOT NULL, abstained INTEGER NOT NULL, reason TEXT NOT NULL, "
            "prompt_tokens INTEGER NOT NULL, reranker_model_id TEXT NOT NULL, degraded INTEGER NOT NULL)"
        )
        row = ("old", "t", time.time(), "acme", "q", "[]", "[]", "a", "[]", 0, "", 1, "m", 0)
        conn.execute("INSERT INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)
    upgraded = AnswerLog(str(old))
    upgraded.warm_up()
    assert upgraded.answer("acme", "old")["access_scopes"] == '["*"]'  # unknown: shown only to '*' keys
    assert upgraded.answer("acme", _record(upgraded, _candidates(1), ["chunk-0"]))["access_scopes"] == '["hr"]'


def test_a_failed_record_leaves_no_half_written_answer(tmp_path):
    path = tmp_path / "answers.sqlite"
    log = AnswerLog(str(path))
    log.warm_up()
    _record(log, _candidates(3), ["chunk-0"])
    broken = _candidates(3) + [{"chunk_id": "chunk-x", "document_id": None}]  # NOT NULL document_id
    with pytest.raises(sqlite3.IntegrityError):
        _record(log, broken, ["chunk-0"])
    assert _counts(path) == (1, 5)  # the first answer only; the broken one's row was rolled back
    _record(log, _candidates(2), [])  # and the log still takes writes
    assert _counts(path) == (2, 7)


def test_strict_privacy_keeps_no_question_or_answer_text(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMESH_PRIVACY", "strict")
    log = AnswerLog(str(tmp_path / "answers.sqlite"))
    log.warm_up()
    row = log.answer("acme", _record(log, _candidates(2), ["chunk-0"]))
    assert "policy" not in row["query"] and row["query"].startswith("[redacted sha256:")
    assert "says so" not in row["answer"] and row["answer"].startswith("[redacted sha256:")


def _background(tmp_path) -> tuple[AnswerLog, Path]:
    path = tmp_path / "answers.sqlite"
    log = AnswerLog(str(path), background=True)
    log.warm_up()
    return log, path


def test_in_the_background_reads_and_feedback_see_every_recorded_answer(tmp_path):
    log, path = _background(tmp_path)
    ids = [_record(log, _candidates(5), ["chunk-0"]) for _ in range(200)]
    # No flush by the caller: the feedback write and the reads wait for the queue themselves.
    log.add_feedback(ids[-1], "thumbs_down", "", "doc-1", "v1", "evidence", False)
    assert [r["answer_id"] for r in log.feedback_rows()] == [ids[-1]]
    assert log.answer("acme", ids[-1])["query"] == "what does the policy say?"
    assert "chunk-4" in log.lineage_chunk_ids("acme", ["doc-1"])
    assert _counts(path) == (200, 200 * 7)  # 5 candidates + 1 context + 1 cited each
    log.close()


def test_in_the_background_an_erasure_finds_answers_still_queued(tmp_path):
    log, path = _background(tmp_path)
    for _ in range(50):
        _record(log, _candidates(3), ["chunk-0"])
    checks = log.erase("acme", None, {"chunk-0"}, ["policy"])
    assert checks[0].removed == 50 and checks[0].after == 0
    assert _counts(path) == (0, 0)
    log.close()


def test_closing_writes_what_is_queued(tmp_path):
    log, path = _background(tmp_path)
    for _ in range(300):
        _record(log, _candidates(2), [])
    log.close()
    assert _counts(path) == (300, 600)


def test_in_the_background_a_bad_answer_costs_only_itself(tmp_path, caplog):
    log, path = _background(tmp_path)
    good = _record(log, _candidates(2), [])
    bad = _record(log, _candidates(2) + [{"chunk_id": "chunk-x", "document_id": None}], [])  # NOT NULL document_id
    _record(log, _candidates(2), [])
    log.flush()
    assert _counts(path) == (2, 4)
    assert log.answer("acme", good) is not None and log.answer("acme", bad) is None
    assert f"answer {bad} not logged" in caplog.text
    log.close()


def _age(path: Path, answer_id: str, days: float) -> None:
    """Makes an answer `days` old, as another process (a clock) would see it."""
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE answers SET created_at = ? WHERE answer_id = ?", (time.time() - days * 86400, answer_id))


def _feedback_count(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM feedback").fetchone()[0]


def test_answers_past_retention_are_not_read_and_a_start_deletes_them(tmp_path):
    """A log left idle (or a mesh left off) past the window: nothing expired is shown, and the next start
    deletes it with its lineage and feedback, before any new answer is written."""
    path = tmp_path / "answers.sqlite"
    log = AnswerLog(str(path), retention_days=30)
    log.warm_up()
    old, recent = _record(log, _candidates(3), ["chunk-0"]), _record(log, _candidates(3), ["chunk-0"])
    for answer_id in (old, recent):
        log.add_feedback(answer_id, "thumbs_down", "", "doc-1", "v1", "evidence", False)
    _age(path, old, 31)

    assert log.answer("acme", old) is None and log.answer("acme", recent) is not None
    assert [r["answer_id"] for r in log.feedback_rows()] == [recent]

    restarted = AnswerLog(str(path), retention_days=30)
    restarted.warm_up()
    assert _counts(path) == (1, 5) and _feedback_count(path) == 1


def test_a_running_log_deletes_expired_answers_without_a_write(tmp_path):
    path = tmp_path / "answers.sqlite"
    log = AnswerLog(str(path), retention_days=3 / 86400, background=True)  # 3 s: swept every 1/8 s
    log.warm_up()
    _record(log, _candidates(2), [])
    log.flush()
    assert _counts(path) == (1, 2)
    deadline = time.monotonic() + 30
    while _counts(path) != (0, 0) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _counts(path) == (0, 0), "no sweep deleted the expired answer"
    log.close()


def test_feedback_is_read_for_one_tenant_and_rating(tmp_path):
    log = AnswerLog(str(tmp_path / "answers.sqlite"))
    log.warm_up()
    given = {}
    for tenant in ("acme", "globex"):
        for rating in ("RATING_THUMBS_UP", "RATING_THUMBS_DOWN"):
            answer_id = _record(log, _candidates(3), ["chunk-0"], tenant_id=tenant)
            given[tenant, rating] = log.add_feedback(answer_id, rating, "", "", "", "", False)
    assert len(log.feedback_rows()) == 4
    assert {r["feedback_id"] for r in log.feedback_rows(tenant_id="globex")} == {
        given["globex", "RATING_THUMBS_UP"],
        given["globex", "RATING_THUMBS_DOWN"],
    }
    down = log.feedback_rows(tenant_id="acme", rating="RATING_THUMBS_DOWN")
    assert [r["feedback_id"] for r in down] == [given["acme", "RATING_THUMBS_DOWN"]]
    assert log.feedback_rows(tenant_id="initech") == []
