"""Feedback review over the API: the tenant's feedback with the triage pile and evaluation case each
makes (ListFeedback), and the record of where exported cases were written (RecordFeedbackExport), so the
CLI's `triage` and `feedback export` work against a remote gateway instead of opening its SQLite file."""

import json
import os
import sqlite3

from services.gateway.answer_log import AnswerLog, feedback_to_case, triage_pile
from services.gateway.auth import unheld_scopes
from shared.errors import FailedPrecondition, InvalidArgument
from shared.names import check_tenant_id
from shared.paging import after_key, cut, page_size
from shared.stubs import gateway_pb2

# One request names at most this many feedback ids (an export of a month's reviews fits many times over).
MAX_EXPORT_IDS = 10_000


class FeedbackReview:
    def __init__(self, answer_log: AnswerLog | None):
        self.answer_log = answer_log

    def _log(self) -> AnswerLog:
        if self.answer_log is None:
            raise FailedPrecondition("the answer log is disabled on this gateway")
        return self.answer_log

    def _rows(self, tenant_id: str) -> list[sqlite3.Row]:
        """The tenant's feedback that the calling key may review (see _reviewable)."""
        return [row for row in self._log().feedback_rows(tenant_id=tenant_id) if _reviewable(row)]

    def list_feedback(self, request: gateway_pb2.ListFeedbackRequest) -> gateway_pb2.ListFeedbackResponse:
        check_tenant_id(request.tenant_id)
        if request.since < 0:
            raise InvalidArgument("since", "must not be negative (seconds since the Unix epoch)")
        if request.rating not in gateway_pb2.Rating.values():
            raise InvalidArgument("rating", f"{request.rating} is not a Rating")
        limit = page_size(request.page_size)
        after = after_key(request.page_token, (float, str), "ListFeedback")
        wanted = gateway_pb2.Rating.Name(request.rating) if request.rating else None
        read = self._log().feedback_rows(request.since, request.tenant_id, wanted, after, limit + 1)
        rows, following = cut(read, limit, lambda row: (row["created_at"], row["feedback_id"]))
        return gateway_pb2.ListFeedbackResponse(
            entries=[_entry(row) for row in rows if _reviewable(row)], next_page_token=following
        )

    def record_export(
        self, request: gateway_pb2.RecordFeedbackExportRequest
    ) -> gateway_pb2.RecordFeedbackExportResponse:
        check_tenant_id(request.tenant_id)
        if not os.path.isabs(request.path):
            raise InvalidArgument("path", f"{request.path[:200]!r} is not an absolute path")
        if not request.feedback_ids:
            raise InvalidArgument("feedback_ids", "is empty")
        if len(request.feedback_ids) > MAX_EXPORT_IDS:
            raise InvalidArgument(
                "feedback_ids", f"{len(request.feedback_ids)} ids, over the limit of {MAX_EXPORT_IDS}"
            )
        by_id = {row["feedback_id"]: row for row in self._rows(request.tenant_id)}
        unknown = [fid for fid in request.feedback_ids if fid not in by_id]
        if unknown:
            raise InvalidArgument(
                "feedback_ids",
                f"{len(unknown)} not in the answer log of tenant {request.tenant_id!r} (first: {unknown[0][:40]!r})",
            )
        pairs = [(feedback_to_case(by_id[fid]), by_id[fid]) for fid in dict.fromkeys(request.feedback_ids)]
        caseless = [row["feedback_id"] for case, row in pairs if case is None]
        if caseless:
            raise InvalidArgument(
                "feedback_ids", f"{caseless[0][:40]!r} makes no evaluation case (the reviewer gave no evidence)"
            )
        self._log().record_export(request.path, [(case, row) for case, row in pairs if case is not None])
        return gateway_pb2.RecordFeedbackExportResponse(recorded=len(pairs))


def _reviewable(row: sqlite3.Row) -> bool:
    """Feedback on an answer asked within scopes the calling key holds: a question asked with `hr` and an
    evidence quote from an hr document are not shown to a key without it."""
    return not unheld_scopes(json.loads(row["access_scopes"]))


def _entry(row: sqlite3.Row) -> gateway_pb2.FeedbackEntry:
    case = feedback_to_case(row)
    return gateway_pb2.FeedbackEntry(
        feedback_id=row["feedback_id"],
        answer_id=row["answer_id"],
        trace_id=row["trace_id"],
        question=row["query"],
        rating=gateway_pb2.Rating.Value(row["rating"]),
        comment=row["comment"],
        expected_document_id=row["expected_document_id"],
        expected_version=row["expected_version"],
        expected_evidence=row["expected_evidence"],
        should_abstain=bool(row["should_abstain"]),
        created_at=row["created_at"],
        abstained=bool(row["abstained"]),
        triage_pile=triage_pile(row),
        eval_case_json=json.dumps(case) if case else "",
    )
