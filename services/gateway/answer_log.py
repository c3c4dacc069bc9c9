"""The answer log: per answer, the query, every stage's chunk ids and scores, prompt size and answer,
plus user feedback. A local SQLite store with a retention window, read by `ragmesh triage` and
`ragmesh feedback export`.

The gateway writes answers in the background (`background=True`): an Ask queues its row and returns; one
writer thread commits whatever is queued in one transaction. Every read, feedback write, export record and
erasure first waits until the queue is written (`flush`), so they see every answer already returned, and an
erasure leaves no queued copy behind; `close` (at shutdown) writes the rest."""

import json
import logging
import os
import queue
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable

from services.gateway.policy import GATE_REASONS
from shared.erasure import ScanResult, StoreCheck, scan_files, scan_text, sqlite_files
from shared.model import PUBLIC_SCOPE
from shared.privacy import redact, strict
from shared.sqlite import ThreadLocalSQLite, write_transaction

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
  degraded INTEGER NOT NULL,
  -- The scopes the Ask read with besides public (a JSON list): its question, answer and feedback are shown
  -- for review only to a key holding them all. Rows from before the column: '*', i.e. only to '*' keys.
  access_scopes TEXT NOT NULL DEFAULT '["*"]'
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
-- Review reads feedback a page at a time in this order.
CREATE INDEX IF NOT EXISTS feedback_created ON feedback (created_at, feedback_id);
-- Lineage kept as data: every chunk id an answer row holds (candidate, context or cited) with its
-- document, so an erasure finds the rows by (tenant, document) or chunk id without reading the JSON.
CREATE TABLE IF NOT EXISTS answer_chunks (
  answer_id TEXT NOT NULL REFERENCES answers (answer_id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL,
  document_id TEXT NOT NULL,
  chunk_id TEXT NOT NULL,
  role TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS answer_chunks_document ON answer_chunks (tenant_id, document_id);
CREATE INDEX IF NOT EXISTS answer_chunks_chunk ON answer_chunks (chunk_id);
CREATE INDEX IF NOT EXISTS answer_chunks_answer ON answer_chunks (answer_id);
-- Files `ragmesh feedback export --out` wrote, and which answer and document each case came from, so an
-- erasure can rewrite them.
CREATE TABLE IF NOT EXISTS exports (
  path TEXT NOT NULL,
  case_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  answer_id TEXT NOT NULL,
  document_id TEXT NOT NULL,
  created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS exports_tenant ON exports (tenant_id);
"""
CONTEXT, CITED, CANDIDATE = "context", "cited", "candidate"
# Answers waiting for the background writer: a full queue makes an Ask wait (nothing is dropped).
QUEUE_SIZE = 1024
# Answers committed in one transaction at most.
WRITE_BATCH = 64
# Seconds between retention sweeps of a running log (at most; a window under a day sweeps more often).
SWEEP_INTERVAL = 3600.0

log = logging.getLogger("ragmesh.gateway.answer_log")
_Entry = tuple[tuple, list[tuple], float]  # (answers row, lineage rows, time recorded)


class _BackgroundWriter:
    """One thread that commits queued answers, as many as are waiting per transaction."""

    _STOP = object()

    def __init__(self, write, queue_size: int = QUEUE_SIZE):
        self._write = write
        self._queue: queue.Queue = queue.Queue(maxsize=queue_size)
        self._thread = threading.Thread(target=self._loop, name="answer-log-writer", daemon=True)
        self._thread.start()

    def submit(self, entry: _Entry) -> None:
        self._queue.put(entry)

    def flush(self) -> None:
        """Returns when everything submitted before the call is committed (or reported as failed)."""
        self._queue.join()

    def close(self) -> None:
        if self._thread.is_alive():
            self._queue.put(self._STOP)
            self._thread.join()

    def _loop(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < WRITE_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            entries = [e for e in batch if e is not self._STOP]
            try:
                self._commit(entries)
            finally:
                for _ in batch:
                    self._queue.task_done()
            if len(entries) < len(batch):
                return

    def _commit(self, entries: list[_Entry]) -> None:
        if not entries:
            return
        try:
            self._write(entries)
        except Exception:  # noqa: BLE001 - one bad answer must not cost the others in its batch
            for entry in entries:
                try:
                    self._write([entry])
                except Exception:  # noqa: BLE001 - the caller has its answer; the log says what it lost
                    log.exception("answer %s not logged", entry[0][0])


class _Sweeper:
    """A thread that applies the retention window every `interval` seconds, so an idle log keeps nothing past
    it (a sweep on each write alone left a quiet mesh's old answers on disk, and listed, indefinitely)."""

    def __init__(self, sweep: Callable[[], int], interval: float):
        self._sweep = sweep
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="answer-log-sweeper", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._sweep()
            except Exception:  # noqa: BLE001 - the next sweep tries again; the log says why this one failed
                log.exception("answer log retention sweep failed")


class AnswerLog:
    def __init__(self, path: str, retention_days: float = 30.0, background: bool = False):
        self.path = path
        self.retention_seconds = retention_days * 86400
        # The mesh's privacy mode, read once: it is fixed for the process, and each read parses every mesh setting.
        self.private = strict()
        # secure_delete: retention and erasure overwrite deleted rows instead of leaving them in free pages.
        self._db = ThreadLocalSQLite(path, pragmas=("PRAGMA secure_delete=ON",))
        self._writer = _BackgroundWriter(self._write) if background else None
        self._background = background
        self._sweeper: _Sweeper | None = None

    def flush(self) -> None:
        """Waits until every answer recorded so far is committed (a no-op when answers are written in place)."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Writes what is queued and stops the background threads (the gateway calls it at shutdown)."""
        if self._sweeper is not None:
            self._sweeper.close()
        if self._writer is not None:
            self._writer.close()

    def warm_up(self) -> None:
        os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        conn = self._conn()
        conn.executescript(_SCHEMA)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(answers)")}
        if "access_scopes" not in columns:  # a log written before answers recorded their scopes
            conn.execute("ALTER TABLE answers ADD COLUMN access_scopes TEXT NOT NULL DEFAULT '[\"*\"]'")
        self._backfill_lineage()
        # A log that was off (or idle) past the window starts without what expired meanwhile.
        self.sweep()
        if self._background and self._sweeper is None:
            self._sweeper = _Sweeper(self.sweep, min(SWEEP_INTERVAL, self.retention_seconds / 24))

    def _cutoff(self, now: float | None = None) -> float:
        return (time.time() if now is None else now) - self.retention_seconds

    def sweep(self, now: float | None = None) -> int:
        """Deletes the answers older than the retention window, with their lineage and feedback (rows
        overwritten: secure_delete). Returns how many answers went."""
        with write_transaction(self._conn()) as conn:
            return self._delete_expired(conn, now)

    def _delete_expired(self, conn: sqlite3.Connection, now: float | None) -> int:
        # Lineage and feedback go with their answer (ON DELETE CASCADE).
        return conn.execute("DELETE FROM answers WHERE created_at < ?", (self._cutoff(now),)).rowcount

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
        access_scopes: list[str],
    ) -> str:
        answer_id = uuid.uuid4().hex
        now = time.time()
        private = self.private
        row = (
            answer_id,
            trace_id,
            now,
            tenant_id,
            redact(query) if private else query,
            json.dumps(candidates),
            json.dumps(context_ids),
            redact(answer) if private else answer,
            json.dumps(cited_ids),
            int(abstained),
            reason.split(":")[0] if private else reason,
            prompt_tokens,
            reranker_model_id,
            int(degraded),
            json.dumps(sorted({s for s in access_scopes if s and s != PUBLIC_SCOPE})),
        )
        entry = (row, _lineage(answer_id, tenant_id, candidates, context_ids, cited_ids), now)
        if self._writer is not None:
            self._writer.submit(entry)
        else:
            self._write([entry])
        return answer_id

    def _write(self, entries: list[_Entry]) -> None:
        # One transaction: the answers, their lineage and the retention sweep commit together (in autocommit
        # mode each lineage row was a commit of its own, ~60 per answer), and a failure leaves none of them.
        with write_transaction(self._conn()) as conn:
            for row, lineage, _ in entries:
                conn.execute("INSERT INTO answers VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", row)
                conn.executemany("INSERT INTO answer_chunks VALUES (?,?,?,?,?)", lineage)
            # Retention is applied on write too, so a busy log never waits for the sweeper to shrink.
            self._delete_expired(conn, max(t for _, _, t in entries))

    def answer(self, tenant_id: str, answer_id: str) -> sqlite3.Row | None:
        self.flush()
        return (
            self._conn()
            .execute(
                "SELECT * FROM answers WHERE answer_id=? AND tenant_id=? AND created_at >= ?",
                (answer_id, tenant_id, self._cutoff()),
            )
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
        self.flush()  # the answer it rates is committed first
        self._conn().execute(
            "INSERT INTO feedback VALUES (?,?,?,?,?,?,?,?,?)",
            (
                feedback_id,
                answer_id,
                time.time(),
                rating,
                redact(comment),
                expected_document_id,
                expected_version,
                redact(expected_evidence),
                int(should_abstain),
            ),
        )
        return feedback_id

    def feedback_rows(
        self,
        since: float = 0.0,
        tenant_id: str | None = None,
        rating: str | None = None,
        after: tuple[float | str, ...] | None = None,
        limit: int = -1,
    ) -> list[sqlite3.Row]:
        """Feedback on answers within retention, oldest first (then by id): given at or after `since`, on
        answers of `tenant_id` and with `rating` when named (filtered here, so one tenant's review does not read
        every tenant's answers with their candidate lists); after the (created_at, feedback_id) key `after`, at
        most `limit` rows (-1: all)."""
        self.flush()
        where = ["f.created_at >= ?", "a.created_at >= ?"]
        params: list[float | str] = [since, self._cutoff()]
        if tenant_id is not None:
            where.append("a.tenant_id = ?")
            params.append(tenant_id)
        if rating is not None:
            where.append("f.rating = ?")
            params.append(rating)
        if after is not None:
            where.append("(f.created_at, f.feedback_id) > (?, ?)")
            params += after
        return (
            self._conn()
            .execute(
                "SELECT f.*, a.trace_id, a.tenant_id, a.query, a.candidates, a.context_ids, a.answer, a.cited_ids, "
                "a.abstained, a.reason, a.access_scopes FROM feedback f JOIN answers a ON a.answer_id = f.answer_id "
                f"WHERE {' AND '.join(where)} ORDER BY f.created_at, f.feedback_id LIMIT ?",
                (*params, limit),
            )
            .fetchall()
        )

    def _backfill_lineage(self) -> None:
        """Rows written before the lineage table existed get theirs from their JSON columns, once."""
        conn = self._conn()
        rows = conn.execute(
            "SELECT answer_id, tenant_id, candidates, context_ids, cited_ids FROM answers a "
            "WHERE NOT EXISTS (SELECT 1 FROM answer_chunks l WHERE l.answer_id = a.answer_id)"
        ).fetchall()
        for r in rows:
            lineage = _lineage(
                r["answer_id"],
                r["tenant_id"],
                json.loads(r["candidates"]),
                json.loads(r["context_ids"]),
                json.loads(r["cited_ids"]),
            )
            conn.executemany("INSERT INTO answer_chunks VALUES (?,?,?,?,?)", lineage)

    def lineage_chunk_ids(self, tenant_id: str, document_ids: list[str] | None) -> set[str]:
        """Chunk ids the log holds for these documents of the tenant (all of the tenant's with None)."""
        self.flush()
        sql, params = "SELECT DISTINCT chunk_id FROM answer_chunks WHERE tenant_id=?", [tenant_id]
        if document_ids is not None:
            sql += f" AND document_id IN ({','.join('?' * len(document_ids))})"
            params += document_ids
        return {r[0] for r in self._conn().execute(sql, params)}

    def record_export(self, path: str, cases: list[tuple[dict, sqlite3.Row]]) -> None:
        """Remembers which file holds which case (from which answer and expected document)."""
        self.flush()
        now = time.time()
        self._conn().executemany(
            "INSERT INTO exports VALUES (?,?,?,?,?,?)",
            [
                (
                    os.path.abspath(path),
                    case["id"],
                    row["tenant_id"],
                    row["answer_id"],
                    row["expected_document_id"],
                    now,
                )
                for case, row in cases
            ],
        )

    # ---- erasure ----------------------------------------------------------------------------------

    def erase(
        self, tenant_id: str, document_ids: list[str] | None, chunk_ids: set[str], probes: list[str]
    ) -> list[StoreCheck]:
        """Erases a tenant's documents (all of the tenant with `document_ids` None) from the log: rows that
        put one of their chunks before the generator or cited it go (with their feedback); rows that only
        ranked one lose those candidates; feedback naming one as the expected document goes; exported cases
        from any of these are removed from their files. Then the file is vacuumed and its log truncated,
        and every store is searched for the probes and chunk ids. Answers still queued are committed first,
        so none escapes the erasure."""
        self.flush()
        conn = self._conn()
        ids = sorted(chunk_ids)
        whole = document_ids is None
        docs = document_ids or []
        with write_transaction(conn):
            if whole:
                gone = [r[0] for r in conn.execute("SELECT answer_id FROM answers WHERE tenant_id=?", (tenant_id,))]
                scrub: dict[str, None] = {}
            else:
                held = self._rows_holding(conn, tenant_id, docs, ids)
                gone = sorted({a for a, role in held if role != CANDIDATE})
                scrub = dict.fromkeys(sorted({a for a, _ in held} - set(gone)))
            doomed_feedback = self._feedback_ids(conn, tenant_id, gone, docs)
            exports = self._erase_exports(conn, tenant_id, docs, gone, whole, probes, ids)
            conn.executemany("DELETE FROM feedback WHERE feedback_id=?", [(f,) for f in doomed_feedback])
            conn.executemany("DELETE FROM answers WHERE answer_id=?", [(a,) for a in gone])  # cascades
            for answer_id in scrub:
                self._scrub_candidates(conn, answer_id, set(docs), set(ids))
        # A vacuum rewrites the file without free pages; the truncating checkpoint empties the -wal file.
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        method = (
            "DELETE with secure_delete=ON, VACUUM, wal_checkpoint(TRUNCATE); verified by SQL over every text column"
        )
        log = StoreCheck(
            "answer_log", self.path, method + " and a raw byte scan of the file, -wal and -shm", before=len(gone)
        )
        log.removed = len(gone)
        log.note = f"{len(scrub)} other answers lost the erased candidates from their ranked lists"
        log.after = self._count_held(conn, tenant_id, docs, ids, whole)
        log.add_scan(self._scan_rows(conn, probes, ids))
        log.add_scan(scan_files(sqlite_files(self.path), probes, ids))
        removed = len(doomed_feedback)
        feedback = StoreCheck("feedback", self.path, method, removed=removed, before=removed)
        feedback.after = len(self._feedback_ids(conn, tenant_id, gone, docs))
        feedback.add_scan(self._scan_feedback(conn, probes, ids))
        return [log, feedback, exports]

    @staticmethod
    def _rows_holding(conn, tenant_id: str, docs: list[str], ids: list[str]) -> set[tuple[str, str]]:
        """(answer id, role) of every lineage entry naming one of the documents or chunk ids."""
        held = set(
            conn.execute(
                "SELECT answer_id, role FROM answer_chunks "
                f"WHERE tenant_id=? AND document_id IN ({','.join('?' * len(docs))})",
                [tenant_id, *docs],
            ).fetchall()
        )
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            held |= set(
                conn.execute(
                    "SELECT answer_id, role FROM answer_chunks "
                    f"WHERE tenant_id=? AND chunk_id IN ({','.join('?' * len(part))})",
                    [tenant_id, *part],
                ).fetchall()
            )
        return {(a, role) for a, role in held}

    def _count_held(self, conn, tenant_id: str, docs: list[str], ids: list[str], whole: bool) -> int:
        if whole:
            return conn.execute("SELECT COUNT(*) FROM answers WHERE tenant_id=?", (tenant_id,)).fetchone()[0]
        return len({a for a, _ in self._rows_holding(conn, tenant_id, docs, ids)})

    @staticmethod
    def _feedback_ids(conn, tenant_id: str, answer_ids: list[str], docs: list[str]) -> set[str]:
        """Feedback on these answers, and feedback of the tenant naming one of the documents as expected."""
        found = {
            r[0]
            for a in answer_ids
            for r in conn.execute("SELECT feedback_id FROM feedback WHERE answer_id=?", (a,)).fetchall()
        }
        found |= {
            r[0]
            for r in conn.execute(
                "SELECT f.feedback_id FROM feedback f JOIN answers a ON a.answer_id = f.answer_id WHERE a.tenant_id=? "
                f"AND f.expected_document_id IN ({','.join('?' * len(docs))})",
                [tenant_id, *docs],
            )
        }
        return found

    @staticmethod
    def _scrub_candidates(conn, answer_id: str, docs: set[str], ids: set[str]) -> None:
        (raw,) = conn.execute("SELECT candidates FROM answers WHERE answer_id=?", (answer_id,)).fetchone()
        kept = [c for c in json.loads(raw) if c["document_id"] not in docs and c["chunk_id"] not in ids]
        conn.execute("UPDATE answers SET candidates=? WHERE answer_id=?", (json.dumps(kept), answer_id))
        conn.execute(
            "DELETE FROM answer_chunks WHERE answer_id=? AND role=? AND (document_id IN "
            f"({','.join('?' * len(docs))}) OR chunk_id IN ({','.join('?' * len(ids))}))",
            [answer_id, CANDIDATE, *docs, *ids],
        )

    @staticmethod
    def _scan_rows(conn, probes: list[str], ids: list[str]) -> ScanResult:
        texts = [
            "\n".join(str(v) for v in row)
            for row in conn.execute(
                "SELECT query, candidates, context_ids, answer, cited_ids FROM answers "
                "UNION ALL SELECT document_id, chunk_id, '', '', '' FROM answer_chunks"
            )
        ]
        return scan_text(texts, probes, ids)

    @staticmethod
    def _scan_feedback(conn, probes: list[str], ids: list[str]) -> ScanResult:
        texts = [
            "\n".join(str(v) for v in row)
            for row in conn.execute("SELECT comment, expected_document_id, expected_evidence FROM feedback")
        ]
        return scan_text(texts, probes, ids)

    @staticmethod
    def _erase_exports(
        conn, tenant_id: str, docs: list[str], gone: list[str], whole: bool, probes: list[str], ids: list[str]
    ) -> StoreCheck:
        """Removes the affected cases from every export file the log knows of (rewritten in place), then
        reads every export file of the tenant back for the probes and chunk ids."""
        rows = conn.execute(
            "SELECT path, case_id, answer_id, document_id FROM exports WHERE tenant_id=?", (tenant_id,)
        ).fetchall()
        erased_answers = set(gone)
        doomed: dict[str, set[str]] = {}
        for path, case_id, answer_id, document_id in rows:
            if whole or answer_id in erased_answers or document_id in docs:
                doomed.setdefault(path, set()).add(case_id)
        check = StoreCheck(
            "exported_cases",
            ", ".join(sorted(doomed)) or "(no export file holds an affected case)",
            "cases removed from each export file `ragmesh feedback export --out` wrote (rewritten in place); "
            "verified by reading the files back",
        )
        for path, case_ids in doomed.items():
            check.before += len(case_ids)
            if not os.path.exists(path):
                check.note += f"{path} no longer exists; "
                continue
            with open(path, encoding="utf-8") as f:
                lines = f.readlines()
            kept = [line for line in lines if not line.strip() or json.loads(line).get("id") not in case_ids]
            check.removed += len(lines) - len(kept)
            with open(path, "r+", encoding="utf-8") as f:  # in place: no old copy left behind by a rename
                f.write("".join(kept))
                f.truncate()
            with open(path, encoding="utf-8") as f:
                check.after += sum(1 for line in f if line.strip() and json.loads(line).get("id") in case_ids)
            conn.executemany("DELETE FROM exports WHERE path=? AND case_id=?", [(path, c) for c in case_ids])
        check.add_scan(scan_files(sorted({r[0] for r in rows}), probes, ids))
        return check


def _lineage(answer_id, tenant_id, candidates, context_ids, cited_ids) -> list[tuple]:
    documents = {c["chunk_id"]: c["document_id"] for c in candidates}
    rows = [(answer_id, tenant_id, c["document_id"], c["chunk_id"], CANDIDATE) for c in candidates]
    rows += [(answer_id, tenant_id, documents.get(cid, ""), cid, CONTEXT) for cid in context_ids]
    rows += [(answer_id, tenant_id, documents.get(cid, ""), cid, CITED) for cid in cited_ids]
    return rows


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
    # The expected document reached the generator: which part of answering failed to use it (the
    # evaluation's triage, so a reviewer's verdicts and the labelled set are read the same way).
    if row["abstained"]:
        return "gate_abstained" if row["reason"].split(":")[0] in GATE_REASONS else "generator_abstained"
    expected_chunks = {candidates[i]["chunk_id"] for i in positions}
    if not expected_chunks & set(json.loads(row["cited_ids"])):
        return "wrong_citation"
    return "poor_answer"


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
