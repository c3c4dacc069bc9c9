"""Near misses: each answerable question asked again with its gold documents left out of the search
(`ragmesh eval --withhold-gold`), so it becomes unanswerable while the corpus still holds what sits next to the
answer: the same product, the ticket that quotes the manual, the other plan's row. This is the failure users
meet when the right document was never ingested, and it gives every answerable question a near-miss twin,
where the hand-written unanswerable questions are few.

The request leaves the gold documents out (`SearchFilters.exclude_document_ids`), which searches as the index
without them would, except for BM25's document frequencies. An answer given to such a question is rated as a
near-miss answer, apart from the written unanswerable questions: another document may state the same fact (a
ticket quoting the manual), so the rate is an upper bound, and its answers are worth reading.
"""

import dataclasses

from services.evaluation.cases import EvalCase

WITHHELD = "gold withheld"
SUFFIX = "~withheld"


def with_gold_withheld(cases: list[EvalCase]) -> list[EvalCase]:
    """The cases, then each answerable one again as an unanswerable near miss that searches without its gold
    documents (every version of them)."""
    near_misses = [
        dataclasses.replace(
            case,
            case_id=case.case_id + SUFFIX,
            category=WITHHELD,
            gold=[],
            exclude_document_ids=tuple(sorted({g.doc_id for g in case.gold})),
        )
        for case in cases
        if case.answerable
    ]
    return [*cases, *near_misses]
