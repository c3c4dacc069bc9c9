"""Which passages the generator reads: the reranker's best few, the one whose score let the answer through, and for
a comparison each side's own entry.

"E-4421 vs E-4422" ranks first the passages naming both (a release note's "E-4421 and E-4422 are now separate
codes", a ticket's messages) and the E-4422 entry, while the E-4421 entry ranks ninth: read from the top five
alone, one side has no passage about it to be answered from. The gateway and the load test's in-process pipeline
both choose the context here.
"""

from shared.text import comparison_parts, question_terms, title_and_heading_terms


def context_for(question: str, ranked: list, size: int, scored: int = 0) -> list:
    """The first `size` of the ranked passages, and the passage with the best rerank score among the first `scored`
    in place of the last of them when it is not one: the answer decision reads that score (the best of the passages
    kept), so the generator reads that passage. A reranker fused with the first stage can rank it sixth ("what is
    customer data": the MSA's definitions at 0.858, below four passages scoring 0.61-0.68). For a comparison whose
    sides differ by words of their own ("e-4421", "e-4422"), a side that no passage among them is about (none has it
    in its title or headings) brings the best-ranked passage further down that is, in place of the lowest-ranked
    passage about no side."""
    context = list(ranked[:size])
    strongest = max(ranked[:scored], key=lambda p: p.scores.rerank_score, default=None)
    if context and strongest is not None and not any(p is strongest for p in context):
        context[-1] = strongest
    sides = [question_terms(side) for side in comparison_parts(question)]
    if not sides:
        return context
    common = set.intersection(*sides)
    own = [terms - common for terms in sides]
    if not all(own):
        return context
    headed: dict[int, set[str]] = {}

    def about(passage, terms: set[str]) -> bool:
        if id(passage) not in headed:
            headed[id(passage)] = title_and_heading_terms(passage.chunk)
        return terms <= headed[id(passage)]

    for terms in own:
        if any(about(p, terms) for p in context):
            continue
        found = next((p for p in ranked[size:] if about(p, terms)), None)
        spare = next((i for i in reversed(range(len(context))) if not any(about(context[i], t) for t in own)), None)
        if found is not None and spare is not None:
            context[spare] = found
    return context
