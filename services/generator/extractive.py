"""The extractive generator: the answer is sentences quoted from the passages, each with its citation.

Deterministic, and it never states anything that is not in a passage. It abstains when no unit of
any passage (read under its heading path) covers enough of the question's content words.
"""

from shared.model import Answer, Citation, ScoredChunk
from shared.text import answer_units, content_terms, identifiers


class ExtractiveGenerator:
    generator_id = "extractive-v1"

    def __init__(self, max_units: int = 3, min_coverage: float = 0.5):
        self.max_units = max_units
        # A unit supports the answer only if it (with its heading) covers this share of the question's terms.
        self.min_coverage = min_coverage

    def warm_up(self) -> None:
        pass

    def run(self, query: str, passages: list[ScoredChunk]) -> Answer:
        wanted = content_terms(query)
        # An identifier the question names (E-4412, v2.1, clause 7.2) must be in the passage that
        # answers it: a passage about E-4413 does not answer a question about E-6001.
        named = identifiers(query)
        if not wanted:
            return Answer("", [], True, missing="a question with content words", reason="empty_question",
                          generator_id=self.generator_id)
        scored = []  # (score, passage rank, start, end, passage)
        seen_terms: set[str] = set()
        for rank, passage in enumerate(passages):
            body = passage.chunk.body
            heading_terms = content_terms(" ".join(passage.chunk.heading_path)) & wanted
            header_terms: set[str] = set()
            for start, end in answer_units(body):
                unit = body[start:end].lstrip()
                if unit.startswith("#"):
                    continue  # a heading line restates the path; it answers nothing
                hits = content_terms(unit) & wanted
                if unit.startswith("|"):
                    # A table row means nothing without its header: the header's words count fully,
                    # but only for a row that matches on its own (the header is shared by every row).
                    if _is_header(body, end):
                        header_terms = content_terms(unit) & wanted
                        continue
                    if not hits:
                        continue
                    hits |= header_terms
                seen_terms |= hits | heading_terms
                # A unit answers under its heading: "Meaning: ..." below "E-4412 Sync conflict" is
                # about E-4412 as much as a sentence that names it. Ties go to the better-ranked passage.
                covered = hits | heading_terms
                score = len(covered)
                if named <= covered and len(covered) >= self.min_coverage * len(wanted):
                    scored.append((score, rank, start, end, passage))
        if not scored:
            return Answer("", [], True, missing=_missing(wanted, seen_terms), reason="no_supporting_sentence",
                          generator_id=self.generator_id)
        best = max(s[0] for s in scored)
        chosen = sorted((s for s in scored if s[0] >= 0.75 * best), key=lambda s: (-s[0], s[1], s[2]))
        chosen = chosen[: self.max_units]
        lines, citations = [], []
        for _, _, start, end, passage in chosen:
            chunk = passage.chunk
            quote = chunk.body[start:end]
            citations.append(Citation(
                chunk_id=chunk.chunk_id, char_start=chunk.char_start + start, char_end=chunk.char_start + end,
                quote=quote, document_id=chunk.meta.document_id, version=chunk.meta.version,
                heading_path=list(chunk.heading_path),
            ))
            lines.append(f"{quote.strip()} [{len(citations)}]")
        return Answer("\n".join(lines), citations, False, reason="answered", generator_id=self.generator_id)


def _is_header(body: str, row_end: int) -> bool:
    """True when the next line is a Markdown table rule (| --- | --- |)."""
    following = body[row_end:].lstrip("\r\n").split("\n", 1)[0].strip()
    return bool(following) and set(following) <= set("|-: ")


def _missing(wanted: set[str], seen: set[str]) -> str:
    absent = sorted(wanted - seen)
    if not absent:
        return "no passage sentence addresses the question"
    return "the passages do not mention: " + ", ".join(absent)
