"""Bounds on what one request may ask for, checked before any stage is called.

Each is INVALID_ARGUMENT naming the field and the limit: an oversized question or top_k costs every
stage behind the gateway, and every free-text field the answer log stores is bounded with it.
"""

import dataclasses

from shared.errors import InvalidArgument


@dataclasses.dataclass(frozen=True)
class RequestLimits:
    max_question_chars: int = 4000
    max_top_k: int = 200
    max_feedback_chars: int = 10000
    max_question_parts: int = 4

    def text(self, value: str, field: str, limit: int) -> None:
        if len(value) > limit:
            raise InvalidArgument(field, f"{len(value)} characters, over the limit of {limit}")

    def question_parts(self, parts: int) -> None:
        # Each separate question of a message runs the whole funnel.
        if parts > self.max_question_parts:
            raise InvalidArgument(
                "question",
                f"asks {parts} separate questions, over the limit of {self.max_question_parts} a request",
            )

    def top_k(self, top_k: int) -> None:
        if top_k < 0 or top_k > self.max_top_k:
            raise InvalidArgument("top_k", f"{top_k} is outside 0..{self.max_top_k}")

    def feedback(self, request) -> None:
        for field in ("answer_id", "comment", "expected_document_id", "expected_version", "expected_evidence"):
            self.text(getattr(request, field), field, self.max_feedback_chars)
