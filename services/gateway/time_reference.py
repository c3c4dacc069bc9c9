"""When a question asks about the past, search the versions that were in force then.

The index answers from the versions in force now unless a request names a time (`as_of`) or asks for every
version (`include_superseded`). People ask in words instead: "under the old 2025 policy who approved refunds
above 5k", "last year how long did refunds take", "tier 1 refund limit under the previous policy". Searched as
of now, such a question finds only the current policy and is answered from it: a confident answer to a
different question. This module reads the question's own reference to time:

- a past year ("in 2025", "the 2025 rules", "last year"): the versions in force at the end of that year;
- "old", "previous", "former", ... with no year: every version, and where one document has several among the
  candidates, only its superseded ones (the reader asked for what was replaced);
- then and now together ("old vs new", "now vs in 2025", "changed since"): every version, none preferred.

A caller that sets `as_of` or `include_superseded` itself is never second-guessed.
"""

import dataclasses
import re
from datetime import UTC, datetime

from shared.model import normalize_time
from shared.stubs import common_pb2

# A past state of a document, without a date ("older" in `--older-than` is a flag's name, not the past).
_FORMER = re.compile(
    r"(?<![-\w])(old|older|previous|prior|former|earlier|outdated|superseded|legacy|used to|before the (new|current))"
    r"(?![-\w])",
    re.I,
)
# "old" as an age, not as the past: "our invoice is 10 days old", "a 3-month-old account", "how old", "files older than
# 30 days". Read as the past, "can we get a refund? our invoice is 10 days old" was answered from the superseded
# refund policy.
_AGE_BEFORE = re.compile(
    r"(?:\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|several|many)\s*-?\s*"
    r"(?:second|minute|hour|day|week|month|year)s?|\bhow)\s*-?\s*$",
    re.I,
)
_AGE_AFTER = re.compile(r"^\s+than\b", re.I)
# The present named next to the past: a comparison, not a question about the past alone.
_PRESENT = re.compile(r"\b(now|new|newer|current|currently|today|vs\.?|versus|compared?|changed?|anymore)\b", re.I)
_YEAR = re.compile(r"(?<![\d$€£.,/-])((?:19|20)\d{2})(?![\d%]|\.\d)")
_LAST_YEAR = re.compile(r"\blast year\b", re.I)


@dataclasses.dataclass(frozen=True)
class TimeReference:
    as_of: str = ""  # versions in force at this instant (RFC 3339)
    include_superseded: bool = False  # every version competes
    former_only: bool = False  # of a document with several versions among the candidates, keep the superseded
    because: str = ""  # the words it rests on, for the response and the trace

    def describe(self, quote_question: bool = True) -> str:
        """What was searched, and (unless the question's words must stay out, as in privacy mode) why."""
        said = f" (the question says {self.because!r})" if quote_question else ""
        if self.as_of:
            return f"versions in force at {self.as_of}{said}"
        if self.former_only:
            return f"superseded versions first{said}"
        return f"every version{said}"


def time_reference(question: str, now: datetime | None = None) -> TimeReference | None:
    """The question's reference to a past time, or None when it asks about the present."""
    today = now or datetime.now(UTC)
    years = [int(y) for y in _YEAR.findall(question) if today.year - 50 < int(y) < today.year]
    last_year = _LAST_YEAR.search(question)
    if last_year:
        years.append(today.year - 1)
    former = next(
        (
            m
            for m in _FORMER.finditer(question)
            if not _AGE_BEFORE.search(question[: m.start()]) and not _AGE_AFTER.match(question[m.end() :])
        ),
        None,
    )
    present = _PRESENT.search(question)
    if not years and not former:
        return None
    if present:
        past = former.group(0) if former else str(years[0])
        return TimeReference(include_superseded=True, because=f"{past} ... {present.group(0)}")
    if years:
        year = min(years)
        said = last_year.group(0) if last_year and year == today.year - 1 else str(year)
        return TimeReference(as_of=f"{year}-12-31T23:59:59Z", because=said)
    assert former is not None
    return TimeReference(include_superseded=True, former_only=True, because=former.group(0))


def applies(filters: common_pb2.SearchFilters) -> bool:
    """Only a request that names no time of its own gets the question's."""
    return not filters.as_of and not filters.include_superseded


def with_reference(filters: common_pb2.SearchFilters, reference: TimeReference) -> common_pb2.SearchFilters:
    widened = common_pb2.SearchFilters()
    widened.CopyFrom(filters)
    if reference.as_of:
        widened.as_of = reference.as_of
    widened.include_superseded = reference.include_superseded
    return widened


def keep_former(candidates: list[common_pb2.ScoredChunk], now: str) -> list[common_pb2.ScoredChunk]:
    """Drops the other versions (in force now, or not yet) of every document that has a superseded version
    among the candidates; a document with one version stays as it is (the question may draw on it too)."""

    def ended(chunk: common_pb2.Chunk) -> bool:
        end = normalize_time(chunk.meta.effective_to, "effective_to")
        return bool(end) and end <= now

    superseded = {c.chunk.meta.document_id for c in candidates if ended(c.chunk)}
    return [c for c in candidates if ended(c.chunk) or c.chunk.meta.document_id not in superseded]
