"""Runs evaluation cases through the live mesh (gateway Ask / Search) and judges each one."""

import dataclasses
import time

import grpc

from services.evaluation.cases import EvalCase, Gold
from services.gateway.policy import GATE_REASONS
from shared.convert import mode_to_pb
from shared.ratelimit import within_rate_limit
from shared.stubs import gateway_pb2


@dataclasses.dataclass
class CaseResult:
    case: EvalCase
    ranks: dict[str, int]  # gold key -> 1-based rank of its first relevant position
    relevant_positions: list[bool]  # for the first 10 positions
    positions: int
    seconds: dict[str, float]
    answered: bool = False
    citation_valid: bool | None = None
    answer_correct: bool | None = None
    cited_superseded: bool = False
    gold_in_context: bool = False
    top_rerank_score: float | None = None
    coverage: float = 0.0  # the answer's coverage of the question (what the decision's second level reads)
    gold_cited: float | None = None  # of an answer to an answerable question: the share of its gold spans cited
    reranker_model_id: str = ""
    generator_id: str = ""
    abstain_reason: str = ""
    answer_text: str = ""
    cited: list[str] = dataclasses.field(default_factory=list)
    top_ids: list[str] = dataclasses.field(default_factory=list)
    triage: str = "ok"
    # Why the gateway answered without a stage (the reranker), if it did: such an answer measures the fallback, not
    # the configuration, so a report counts them.
    degraded: str = ""


def _holds(chunk, gold: Gold) -> bool:
    """A chunk holds gold evidence when it is the same document version and covers most of the quote;
    gold without evidence (BEIR: relevance is per document) is held by any chunk of the document."""
    if not gold.evidence:
        return chunk.meta.document_id == gold.doc_id
    if chunk.meta.document_id != gold.doc_id or chunk.meta.version != gold.version:
        return False
    overlap = min(chunk.char_end, gold.end) - max(chunk.char_start, gold.start)
    return overlap >= max(1, (gold.end - gold.start) // 2)


def cites_gold(gold: list[Gold], document_id: str, version: str, start: int, end: int) -> bool:
    """A cited span is right when it overlaps gold evidence in the same document version (or, for gold
    without evidence, names the document)."""
    return any(
        document_id == g.doc_id and (not g.evidence or version == g.version and min(end, g.end) > max(start, g.start))
        for g in gold
    )


def cites_any_gold(gold: list[Gold], citations) -> bool:
    """Whether any of an answer's citations (each with document_id, version, char_start, char_end) cites gold
    evidence: the answer is right."""
    return any(cites_gold(gold, c.document_id, c.version, c.char_start, c.char_end) for c in citations)


def _chunk_ranks(case: EvalCase, chunks) -> tuple[dict[str, int], list[bool]]:
    ranks: dict[str, int] = {}
    relevant = []
    for position, chunk in enumerate(chunks, start=1):
        hits = [g for g in case.gold if _holds(chunk, g)]
        for g in hits:
            ranks.setdefault(g.key, position)
        relevant.append(bool(hits))
    return ranks, relevant[:10]


def _doc_ranks(case: EvalCase, chunks) -> tuple[dict[str, int], list[bool], int]:
    """BEIR: a document counts at the rank of its best chunk."""
    order: list[str] = []
    for chunk in chunks:
        if chunk.meta.document_id not in order:
            order.append(chunk.meta.document_id)
    gold = {g.doc_id for g in case.gold}
    ranks = {d: i for i, d in enumerate(order, start=1) if d in gold}
    return ranks, [d in gold for d in order[:10]], len(order)


def _timings(response, total: float) -> dict[str, float]:
    seconds = {t.stage: t.seconds for t in response.timings}
    seconds["total"] = total
    return seconds


def _own_part(case: EvalCase, response: gateway_pb2.AskResponse):
    """What a case is judged on: its own part of a message asking several questions (EvalCase.part), else the whole
    response (a message answered as one question is judged whole: its answer must cite the case's gold)."""
    if case.part is not None and len(response.parts) > case.part:
        return response.parts[case.part]
    return response


def ask_case(stub, case: EvalCase, mode: str, timeout: float) -> CaseResult:
    request = gateway_pb2.AskRequest(
        tenant_id=case.tenant, question=case.question, include_candidates=True, mode=mode_to_pb(mode)
    )
    request.filters.exclude_document_ids.extend(case.exclude_document_ids)
    started = time.perf_counter()
    try:
        response, total = within_rate_limit(lambda: stub.Ask(request, timeout=timeout))
    except grpc.RpcError as err:
        # A failed question is a result (not answered, triaged as an error), not the end of the run.
        result = CaseResult(
            case,
            {},
            [],
            0,
            {"total": time.perf_counter() - started},
            abstain_reason=f"error: {err.code().name}: {err.details()}",
        )
        result.triage = "error"
        return result
    own = _own_part(case, response)
    chunks = [c.chunk for c in own.candidates]
    ranks, relevant = _chunk_ranks(case, chunks)
    answer = own.answer
    result = CaseResult(
        case,
        ranks,
        relevant,
        len(chunks),
        _timings(response, total),
        answered=not answer.abstained,
        coverage=answer.coverage,
        abstain_reason=answer.reason if answer.abstained else "",
        answer_text=answer.text,
        cited=[c.chunk_id for c in answer.citations],
        top_ids=[c.chunk_id for c in chunks[:5]],
        degraded=(response.degraded_reason or "degraded") if response.degraded else "",
    )
    if own.candidates:
        result.top_rerank_score = own.top_rerank_score
    result.reranker_model_id, result.generator_id = response.reranker_model_id, answer.generator_id
    # What the generator saw, or would have seen had the gate not abstained.
    context = [p.chunk for p in own.context] or chunks[: len(own.context) or 5]
    result.gold_in_context = any(_holds(c, g) for c in context for g in case.gold)
    if result.answered:
        context_ids = {p.chunk.chunk_id for p in own.context}
        result.citation_valid = bool(answer.citations) and all(c.chunk_id in context_ids for c in answer.citations)
        spans = [(c.document_id, c.version, c.char_start, c.char_end) for c in answer.citations]
        # Per gold span, whether the answer cites it: a question in parts has a span per part, a complete answer
        # cites each, a right one at least one.
        cited = [any(cites_gold([g], *span) for span in spans) for g in case.gold]
        result.answer_correct = any(cited)
        if cited:
            result.gold_cited = sum(cited) / len(cited)
        result.cited_superseded = any(d == g.doc_id and v != g.version for d, v, _, _ in spans for g in case.gold)
    result.triage = triage(result)
    return result


def search_case(stub, case: EvalCase, mode: str, timeout: float, top_k: int, rerank: bool) -> CaseResult:
    request = gateway_pb2.SearchRequest(
        tenant_id=case.tenant, query=case.question, top_k=top_k, mode=mode_to_pb(mode), rerank=rerank
    )
    response, total = within_rate_limit(lambda: stub.Search(request, timeout=timeout))
    chunks = [r.chunk for r in response.results]
    ranks, relevant, positions = _doc_ranks(case, chunks)
    result = CaseResult(
        case,
        ranks,
        relevant,
        positions,
        _timings(response, total),
        top_ids=[c.meta.document_id for c in chunks[:5]],
        degraded="degraded" if response.degraded else "",
    )
    if response.results and rerank:
        result.top_rerank_score = response.results[0].scores.rerank_score
    result.triage = "ok" if any(r <= 10 for r in ranks.values()) else ("ranking_failure" if ranks else "recall_failure")
    return result


def triage(r: CaseResult) -> str:
    """Which stage a failed case points at."""
    if not r.case.answerable:
        return "false_answer" if r.answered else "ok"
    if r.answered and r.answer_correct and r.citation_valid:
        return "ok"
    if r.answered and r.cited_superseded and not r.answer_correct:
        return "freshness_failure"
    if not r.ranks:
        return "recall_failure"
    if not r.gold_in_context:
        return "ranking_failure"
    # The right passage was there: who failed to use it.
    if r.answered:
        return "wrong_citation"
    if r.abstain_reason.split(":")[0] in GATE_REASONS:
        return "gate_abstained"
    return "generator_abstained"
