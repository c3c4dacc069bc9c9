"""Near misses: each answerable question asked again with its gold documents left out of the search
(`ragmesh eval --withhold-gold`), so it becomes unanswerable while the corpus still holds what sits next to the
answer: the same product, the ticket that quotes the manual, the other plan's row. This is the failure users
meet when the right document was never ingested, and it gives every answerable question a near-miss twin,
where the hand-written unanswerable questions are few.

The request names every other document of the tenant (`SearchFilters.document_ids`), which searches as the
index without the gold documents would, except for BM25's document frequencies. An answer given to such a
question counts as a false answer, though another document may state the same fact (a ticket quoting the
manual): the rate is an upper bound, and its answers are worth reading.
"""

import dataclasses

from services.evaluation.cases import EvalCase
from shared.stubs import gateway_pb2

WITHHELD = "gold withheld"
SUFFIX = "~withheld"


def tenant_documents(stub, tenant: str, timeout: float = 60.0) -> list[str]:
    """Every document id of the tenant the caller's key may read, in order."""
    ids: set[str] = set()
    token = ""
    while True:
        page = stub.ListDocuments(gateway_pb2.ListDocumentsRequest(tenant_id=tenant, page_token=token), timeout=timeout)
        ids.update(d.document_id for d in page.documents)
        token = page.next_page_token
        if not token:
            return sorted(ids)


def with_gold_withheld(cases: list[EvalCase], documents: dict[str, list[str]]) -> list[EvalCase]:
    """The cases, then each answerable one again as an unanswerable near miss searching every document of its
    tenant but its gold ones (none when nothing else is left to search)."""
    near_misses = []
    for case in cases:
        if not case.answerable:
            continue
        gold = {g.doc_id for g in case.gold}
        others = tuple(d for d in documents.get(case.tenant, ()) if d not in gold)
        if others:  # an empty filter would search everything, gold included
            near_misses.append(
                dataclasses.replace(
                    case, case_id=case.case_id + SUFFIX, category=WITHHELD, gold=[], document_ids=others
                )
            )
    return [*cases, *near_misses]
