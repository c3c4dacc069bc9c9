"""What the funnel found for one question, and the response to a message of several separate questions made from
each question's own (shared/questions.py: "1) how long are invoices kept 2) what is the hotel cap in london").

Each part keeps its own answer, passages, score and decision; the message's answer quotes each part under its
question, its citations numbered across the parts, so a caller that reads only `answer` (the CLI, the HTTP front
doors) sees every part and what was not found.
"""

import dataclasses
import itertools
import re

from services.gateway.time_reference import TimeReference
from shared.stubs import common_pb2, gateway_pb2

ANSWERED_IN_PART = "answered_in_part"
_MARKER = re.compile(r"\[(\d+)\]")


@dataclasses.dataclass
class Answered:
    """One question through the funnel."""

    question: str  # as the funnel read it: as the passages spell it (read_as) or as written
    candidates: list  # every candidate, in final order
    model_id: str
    degraded: str  # why it was answered from the fused order; "" when it was not
    reference: TimeReference | None
    read_as: str
    top_score: float | None = None
    answer: common_pb2.Answer = dataclasses.field(default_factory=common_pb2.Answer)
    context: list = dataclasses.field(default_factory=list)  # the passages the generator saw
    suggested: list = dataclasses.field(default_factory=list)  # the closest passages, when it abstained

    def response(self, threshold: float, include_candidates: bool) -> gateway_pb2.AskResponse:
        """The response to a message asking this one question."""
        response = gateway_pb2.AskResponse(
            answer=self.answer,
            context=self.context,
            suggested_reading=self.suggested,
            degraded=bool(self.degraded),
            degraded_reason=self.degraded,
            reranker_model_id=self.model_id,
            abstain_threshold=threshold,
            time_reference=self.reference.describe() if self.reference else "",
            read_as=self.read_as,
        )
        if self.top_score is not None:
            response.top_rerank_score = self.top_score
        if include_candidates:
            response.candidates.extend(self.candidates)
        return response

    def part(self, include_candidates: bool) -> gateway_pb2.AskPart:
        return gateway_pb2.AskPart(
            candidates=self.candidates if include_candidates else [],
            question=self.question,
            answer=self.answer,
            context=self.context,
            suggested_reading=self.suggested,
            top_rerank_score=self.top_score or 0.0,
            time_reference=self.reference.describe() if self.reference else "",
            degraded=bool(self.degraded),
        )


def joined_response(
    parts: list[Answered], threshold: float, include_candidates: bool
) -> tuple[gateway_pb2.AskResponse, list]:
    """The response to a message of several questions, and every part's candidates for the answer log: each chunk
    once, by rank across the parts (each part's first, then each part's second, ...), so the head of the list holds
    every part's best and not only the first part's 50."""
    candidates = _each_once([_by_rank(part.candidates for part in parts)])
    degraded = [part.degraded for part in parts if part.degraded]
    response = gateway_pb2.AskResponse(
        answer=joined_answer(parts),
        context=_each_once(part.context for part in parts),
        suggested_reading=_each_once(part.suggested for part in parts),
        degraded=bool(degraded),
        degraded_reason="; ".join(dict.fromkeys(degraded)),
        reranker_model_id=next((part.model_id for part in parts if part.model_id), ""),
        abstain_threshold=threshold,
        time_reference="; ".join(dict.fromkeys(part.reference.describe() for part in parts if part.reference)),
        parts=[part.part(include_candidates) for part in parts],
    )
    scores = [part.top_score for part in parts if part.top_score is not None]
    if scores:  # the weakest part's evidence
        response.top_rerank_score = min(scores)
    if include_candidates:
        response.candidates.extend(candidates)
    return response, candidates


def joined_answer(parts: list[Answered]) -> common_pb2.Answer:
    """Each part's answer under its question, in the message's order ("1. how long are invoices kept?" and the
    quoted units below it), a part not found said so; an abstention only when every part abstained."""
    answered = [part.answer for part in parts if not part.answer.abstained]
    missing = "; ".join(f"{part.question}: {part.answer.missing}" for part in parts if part.answer.missing)
    if not answered:
        return common_pb2.Answer(
            abstained=True,
            reason=parts[0].answer.reason,
            missing=missing,
            generator_id=parts[0].answer.generator_id,
        )
    sections: list[str] = []
    citations: list[common_pb2.Citation] = []
    for number, part in enumerate(parts, start=1):
        answer = part.answer
        if answer.abstained:
            body = f"Not found in the documents{': ' + answer.missing if answer.missing else ''}."
        else:
            body = _renumbered(answer.text, len(citations), len(answer.citations))
            citations += answer.citations
        sections.append(f"{number}. {part.question}\n{body}")
    return common_pb2.Answer(
        text="\n\n".join(sections),
        citations=citations,
        abstained=False,
        missing=missing,
        reason="answered" if len(answered) == len(parts) else ANSWERED_IN_PART,
        generator_id=answered[0].generator_id,
        coverage=min(answer.coverage for answer in answered),
    )


def _renumbered(text: str, offset: int, count: int) -> str:
    """An answer's citation markers ([1] .. [count]) moved on by the citations of the parts before it."""

    def moved(found: re.Match) -> str:
        number = int(found.group(1))
        return f"[{number + offset}]" if 1 <= number <= count else found.group(0)

    return _MARKER.sub(moved, text)


def _by_rank(lists) -> list:
    """The lists' items by rank across them: every list's first, then every list's second, and so on."""
    return [item for row in itertools.zip_longest(*lists) for item in row if item is not None]


def _each_once(lists) -> list:
    """The chunks of several lists, each chunk once (its first), in order."""
    seen: set[str] = set()
    kept = []
    for scored in (scored for chunks in lists for scored in chunks):
        if scored.chunk.chunk_id not in seen:
            seen.add(scored.chunk.chunk_id)
            kept.append(scored)
    return kept
