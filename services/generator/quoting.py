"""How an extractive answer is written: one line per quoted unit with its citation, or an abstention that names
what the passages lack. Shared by the coverage rule, the learned selector and the support reader, and by the LLM
backends for the spans they cite."""

from collections.abc import Callable

from shared.model import Answer, Citation, ScoredChunk
from shared.text import (
    content_terms,
    read_row,
    table_header_before,
    term_words,
    without_list_marker,
)


def below_threshold(
    query: str, wanted: set[str], passages: list[ScoredChunk], probability: float, threshold: float, generator_id: str
) -> Answer:
    """The abstention of a calibrated answer decision, naming the question's words no passage holds."""
    seen = set().union(*(content_terms(p.chunk.body + " " + " ".join(p.chunk.heading_path)) for p in passages))
    return Answer(
        "",
        [],
        True,
        missing=missing_words(query, wanted, seen & wanted),
        reason=f"no_supporting_unit: p(answer) {probability:.3f} < {threshold:.3f}",
        generator_id=generator_id,
    )


def quoted_answer(
    picked: list[tuple[ScoredChunk, int, int]], generator_id: str, asked: Callable[[str], bool] | None = None
) -> Answer:
    """One line per quoted unit, each with its citation (character span into the document source). With `asked`
    (whether a text states what the question asks for: a date for "when", a version for "which version"), a unit
    that does not state it is read under the heading that does: "which version fixed the windows keep remote bug"
    is answered by a release note's line, and the version is in its heading ("v2.1.3 (2025-07-10): Fixed a bug
    where ...")."""
    lines, citations = [], []
    for passage, start, end in picked:
        citations.append(unit_citation(passage, start, end))
        # The quote keeps the source's characters (it is verified by span); the answer reads as one line, and
        # a table row under its column names ("| Team | $79 |" means nothing without "| Plan | Monthly price |").
        quote = citations[-1].quote
        if quote.lstrip().startswith("|"):
            quote = read_row(table_header_before(passage.chunk.body, start), quote)
        elif quote.lstrip().startswith("#"):  # a dated heading ("## v2.1.0 (2025-06-01)") reads as its title
            quote = quote.lstrip().lstrip("#")
        elif asked and not asked(quote) and (heading := _heading_stating(asked, passage.chunk.heading_path)):
            quote = f"{heading}: {without_list_marker(quote)}"
        lines.append(f"{' '.join(quote.split())} [{len(citations)}]")
    return Answer("\n".join(lines), citations, False, reason="answered", generator_id=generator_id)


def _heading_stating(asked: Callable[[str], bool], heading_path: list[str]) -> str:
    """The deepest heading that states what the question asks for ("v2.1.3 (2025-07-10)"); "" when none does."""
    return next((heading for heading in reversed(heading_path) if asked(heading)), "")


def unit_citation(passage: ScoredChunk, start: int, end: int) -> Citation:
    """The citation of one answer unit (offsets into the chunk body): its character span in the document
    source and its exact text, which the gateway checks against the units of the passages it supplied."""
    chunk = passage.chunk
    return Citation(
        chunk_id=chunk.chunk_id,
        char_start=chunk.char_start + start,
        char_end=chunk.char_start + end,
        quote=chunk.body[start:end],
        document_id=chunk.meta.document_id,
        version=chunk.meta.version,
        heading_path=list(chunk.heading_path),
        title=chunk.meta.title,
    )


def missing_words(query: str, wanted: set[str], seen: set[str]) -> str:
    """What the passages lack, in the question's own words (terms are lemmas: "keep" is the asker's "kept")."""
    words = term_words(query)
    absent = sorted(words.get(term, term) for term in wanted - seen)
    if not absent:
        return "no passage sentence addresses the question"
    return "the passages do not mention: " + ", ".join(absent)
