"""The answer log: per answer, the query, every stage's chunk ids and scores, prompt size and answer,
plus user feedback. A local SQLite store with a retention window, read by `ragmesh triage` and
`ragmesh feedback export`."""

import json
import os
import sqlite3
import time
import uuid

from shared.sqlite import ThreadLocalSQLite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
  answer_id TEXT PRIMARY KEY,
  trace_id TEXT NOT NULL,
  created_at REAL NOT NULL,
  tenant_id TEXT NOT NULL,
  query TEXT NOT NULL,
  candidates TEXT NOT NULL,
  context_ids TEXT NOT NULL,
  answer TEXT NOT NULL,
  cited_ids TEXT NOT NULL,
  abstained INTEGER NOT NULL,
  reason TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  reranker_model_id TEXT NOT NULL,
  degraded INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_created ON answers (created_at);
CREATE TABLE IF NOT EXISTS feedback (
  feedback_id TEXT PRIMARY KEY,
  answer_id TEXT NOT NULL REFERENCES answers (answer_id) ON DELETE CASCADE,
  created_at REAL NOT NULL,
  rating TEXT NOT NULL,
  comment TEXT NOT NULL,
  expected_document_id TEXT NOT NULL,
  expected_version TEXT NOT NULL,
  expected_evidence TEXT NOT NULL,
  should_abstain INTEGER NOT NULL
);
"""


class AnswerLog:
    def __init__(self, path: str, retention_days: float = 30.0):
        self.path = path
        self.retention_seconds = retention_days * 86400
        self._db = ThreadLocalSQLite(path)

    def warm_up(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        self._conn().executescript(_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        return self._db.connection()

    def record(
        self,
        *,
        trace_id: str,
        tenant_id: str,
        query: str,
        candidates: list[dict],
        context_ids: list[str],
        answer: str,
        cited_ids: list[str],
        abstained: bool,
        reason: str,
        prompt_tokens: int,
        reranker_model_id: str,
        degraded: bool,
    ) -> str:
        answer_id = uuid.uuid4().hex
        now = time.time()
        conn = self._conn()
        conn.execute(
            "INSERT INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                answer_id,
                trace_id,
                now,
                tenant_id,
                query,
                json.dumps(candidates),
                json.dumps(context_ids),
                answer,
                json.dumps(cited_ids),
                int(abstained),
                reason,
                prompt_tokens,
                reranker_model_id,
                int(degraded),
            ),
        )
        # Retention is enforced on write, so an idle log does not need a sweeper.
        conn.execute("DELETE FROM answers WHERE created_at < ?", (now - self.retention_seconds,))
        return answer_id

    def answer(self, tenant_id: str, answer_id: str) -> sqlite3.Row | None:
        return (
            self._conn()
            .execute("SELECT * FROM answers WHERE answer_id=? AND tenant_id=?", (answer_id, tenant_id))
            .fetchone()
        )

    def add_feedback(
        self,
        answer_id: str,
        rating: str,
        comment: str,
        expected_document_id: str,
        expected_version: str,
        expected_evidence: str,
        should_abstain: bool,
    ) -> str:
        feedback_id = uuid.uuid4().hex
        self._conn().execute(
            "INSERT INTO feedback VALUES (?,?,?,?,?,?,?,?,?)",
            (
                feedback_id,
                answer_id,
                time.time(),
                rating,
                comment,
                expected_document_id,
                expected_version,
                expected_evidence,
                int(should_abstain),
            ),
        )
        return feedback_id

    def feedback_rows(self, since: float = 0.0) -> list[sqlite3.Row]:
        return (
            self._conn()
            .execute(
                "SELECT f.*, a.trace_id, a.tenant_id, a.query, a.candidates, a.context_ids, a.answer, a.cited_ids, "
                "a.abstained, a.reason FROM feedback f JOIN answers a ON a.answer_id = f.answer_id "
                "WHERE f.created_at >= ? ORDER BY f.created_at",
                (since,),
            )
            .fetchall()
        )


def triage_pile(row) -> str:
    """Where a thumbs-down answer failed, judged by the document the reviewer says it needed."""
    if row["should_abstain"]:
        return "answered_when_it_should_abstain" if not row["abstained"] else "ok"
    expected = row["expected_document_id"]
    if not expected:
        return "unattributed"
    candidates = json.loads(row["candidates"])
    positions = [
        i
        for i, c in enumerate(candidates)
        if c["document_id"] == expected and (not row["expected_version"] or c["version"] == row["expected_version"])
    ]
    if not positions:
        return "never_retrieved"
    context = set(json.loads(row["context_ids"]))
    if not any(candidates[i]["chunk_id"] in context for i in positions):
        return "ranked_low"
    return "generation_failure"


def feedback_to_case(row) -> dict | None:
    """A reviewed feedback row as an evaluation case (the project's case format), or None when the
    reviewer gave no evidence to grade against."""
    if row["should_abstain"]:
        gold = []
    elif row["expected_document_id"] and row["expected_evidence"]:
        gold = [
            {
                "doc_id": row["expected_document_id"],
                "version": row["expected_version"] or "1",
                "evidence": row["expected_evidence"],
            }
        ]
    else:
        return None
    return {
        "id": f"fb-{row['feedback_id'][:12]}",
        "question": row["query"],
        "tenant": row["tenant_id"],
        "category": "unanswerable" if not gold else "feedback",
        "gold": gold,
    }
