"""The funnel: ingest = chunker -> indexer; ask = retriever -> reranker -> generator.

Each downstream call inherits the caller's deadline (StageClient). A failing stage surfaces as a
status that names it, except the reranker: without it, answers fall back to the fused order,
marked degraded.
"""

import itertools
import logging
import threading
import time
import typing

import grpc
from opentelemetry import trace

from services.gateway import supersession, time_reference
from services.gateway.answer_log import AnswerLog
from services.gateway.auth import caller_guard, unheld_scopes
from services.gateway.context import context_for
from services.gateway.limits import RequestLimits
from services.gateway.parts import Answered, joined_response
from services.gateway.policy import BELOW_THRESHOLD, invalid_citations, should_abstain, supported
from services.gateway.scope_readers import ScopeReaders
from shared import spelling
from shared.asker_quotes import asks_of_its_own, may_hold_paste, pasted_quote
from shared.calibration import AnswerDecision
from shared.chatter import without_chatter
from shared.clients import StageCallError, StageClient
from shared.config import DEFAULT_STAGE_TIMEOUTS
from shared.errors import FailedPrecondition, InvalidArgument, NotFound, RagmeshError, require
from shared.model import utc_now
from shared.names import check_tenant_id
from shared.observability import metrics
from shared.observability.tracing import annotate_query
from shared.privacy import redact, strict
from shared.questions import separate_questions
from shared.story import search_text, searched_for, told_and_asked
from shared.stubs import (
    chunker_pb2,
    chunker_pb2_grpc,
    common_pb2,
    gateway_pb2,
    generator_pb2,
    generator_pb2_grpc,
    indexer_pb2,
    indexer_pb2_grpc,
    reranker_pb2,
    reranker_pb2_grpc,
    retriever_pb2,
    retriever_pb2_grpc,
)
from shared.text import chunk_words, content_terms

log = logging.getLogger("ragmesh.gateway")
_tracer = trace.get_tracer(__name__)
UNCALIBRATED_RERANKERS = ("passthrough",)
# The reranker may use this share of the caller's remaining time; the rest is for answering (from the
# fused order when the reranker runs out of it, marked degraded) and for the generator.
RERANK_DEADLINE_SHARE = 0.5


class Funnel:
    def __init__(
        self,
        addresses: dict[str, str],
        decision: AnswerDecision,
        candidates: int = 50,
        rerank_top_n: int = 8,
        context_passages: int = 5,
        suggested_reading: int = 3,
        answer_log: AnswerLog | None = None,
        timeouts: dict[str, float] | None = None,
        request_limits: RequestLimits | None = None,
        time_references: bool = True,
        read_misspellings: bool = True,
        scope_readers: ScopeReaders | None = None,
        indexer_seconds_per_chunk: float = 1.0,
    ):
        # Each stage call is bounded by the caller's deadline and by its own cap: generation and
        # embedding a large document legitimately take longer than a search.
        limits = {**DEFAULT_STAGE_TIMEOUTS, **(timeouts or {})}

        def client(stage, stub):
            return StageClient(stage, addresses[stage], stub, default_timeout=limits[stage])

        self.chunker = client("chunker", chunker_pb2_grpc.ChunkerStub)
        self.indexer = client("indexer", indexer_pb2_grpc.IndexerStub)
        self.retriever = client("retriever", retriever_pb2_grpc.RetrieverStub)
        self.reranker = client("reranker", reranker_pb2_grpc.RerankerStub)
        self.generator = client("generator", generator_pb2_grpc.GeneratorStub)
        self.indexer_seconds_per_chunk = indexer_seconds_per_chunk
        self.decision = decision  # when an answer is given: the calibrated threshold and its second level
        # Warns at ingest of a scope no key of the tenant holds (none to compare with, authentication off).
        self.scope_readers = scope_readers or ScopeReaders(None)
        self.candidates = candidates
        self.rerank_top_n = rerank_top_n
        self.context_passages = context_passages
        self.suggested_reading = suggested_reading
        self.answer_log = answer_log
        self.limits = request_limits or RequestLimits()
        self.time_references = time_references
        self.read_misspellings = read_misspellings
        if read_misspellings:
            spelling.warm_up()  # the English dictionary a slip is read against, loaded once (~0.25 s), not mid-Ask
        # The mesh's privacy mode, read once: it is fixed for the process, and each read parses every mesh setting.
        self.private = strict()
        # How many candidates' view vectors the reranker reads (it says so in each response); None until it has,
        # and then the retriever sends them on every candidate.
        self.reranker_view_vectors: int | None = None
        # How many leading candidates the reranker reads at all (it says so too); the rest go as ids and scores.
        self.reranker_reads: int | None = None
        # Documents accepted but not yet searchable, for the ingestion-freshness gauge.
        self._pending: dict[int, float] = {}
        self._pending_ids = itertools.count()
        self._pending_lock = threading.Lock()
        metrics.INGEST_OLDEST_PENDING.set_function(self.oldest_pending_age)

    def oldest_pending_age(self) -> float:
        with self._pending_lock:
            oldest = min(self._pending.values(), default=None)
        return 0.0 if oldest is None else time.monotonic() - oldest

    # ---- ingest ---------------------------------------------------------------------------------

    def ingest(self, tenant_id: str, documents, context):
        """Every document of a request is accepted at once (the freshness clock starts), then each
        goes through chunker and indexer; a failure is reported in its own result only."""
        accepted = time.monotonic()
        keys = [next(self._pending_ids) for _ in documents]
        with self._pending_lock:
            self._pending.update(dict.fromkeys(keys, accepted))
        given: dict[tuple[str, str], str] = {}  # (document id, version) -> which document of this request gave it
        try:
            for position, (key, document) in enumerate(zip(keys, documents, strict=True)):
                yield self._ingest_one(tenant_id, document, context, accepted, key, given, position)
        finally:
            with self._pending_lock:
                for key in keys:
                    self._pending.pop(key, None)

    def _ingest_one(
        self,
        tenant_id,
        document,
        context,
        accepted: float,
        key: int,
        given: dict[tuple[str, str], str],
        position: int,
    ) -> gateway_pb2.IngestResult:
        document.meta.tenant_id = tenant_id
        result = gateway_pb2.IngestResult(document_id=document.meta.document_id, source_uri=document.meta.source_uri)
        try:
            chunked = self._timed(
                "chunk", self.chunker, "ChunkDocument", chunker_pb2.ChunkDocumentRequest(document=document), context
            )
            result.document_id, result.version = chunked.meta.document_id, chunked.meta.version
            this = f"{result.source_uri or 'a document'} (document {position + 1} of the request)"
            earlier = given.setdefault((result.document_id, result.version), this)
            if earlier != this:  # two files, one document version: the second would silently replace the first
                result.ok, result.error_code = False, "INVALID_ARGUMENT"
                result.error = (
                    f"{this}: {result.document_id}@{result.version} is also given by {earlier}; "
                    "give each file its own doc_id or version"
                )
                metrics.INGESTED_DOCUMENTS.labels("failed").inc()
                return result
            unheld = unheld_scopes(chunked.meta.access_scopes)
            if unheld:  # a key files documents only where it may read them
                result.ok, result.error_code = False, "PERMISSION_DENIED"
                result.error = (
                    f"{result.document_id or result.source_uri}: the key does not hold access scope(s) "
                    f"{', '.join(map(repr, unheld))} the document states"
                )
                metrics.INGESTED_DOCUMENTS.labels("failed").inc()
                return result
            upserted = self._timed(
                "index",
                self.indexer,
                "UpsertDocument",
                indexer_pb2.UpsertDocumentRequest(meta=chunked.meta, chunks=chunked.chunks, guard=caller_guard()),
                context,
                cap=self.indexing_cap(len(chunked.chunks)),
            )
        except StageCallError as err:
            result.ok, result.error_code, result.error = False, err.code.name, err.message
            metrics.INGESTED_DOCUMENTS.labels("failed").inc()
            return result
        finally:
            with self._pending_lock:
                self._pending.pop(key, None)
        metrics.INGEST_LAG.observe(time.monotonic() - accepted)
        metrics.INGESTED_DOCUMENTS.labels("ok").inc()
        result.ok = True
        result.chunks_written = upserted.chunks_written
        result.chunks_unchanged = upserted.chunks_unchanged
        result.chunks_removed = upserted.chunks_removed
        # What the document says it replaces closes the replaced document (reported, never silent).
        result.statements.extend(supersession.link(self.indexer, chunked.meta, chunked.statements, context))
        source = "request" if document.meta.access_scopes else "front matter"
        result.statements.extend(self.scope_readers.warnings(tenant_id, chunked.meta.access_scopes, source))
        return result

    # ---- search and ask -------------------------------------------------------------------------

    def indexing_cap(self, chunks: int) -> float:
        """The gateway's limit on indexing one document: the indexer's own, or more for a long document (its
        embedding takes time in proportion to its chunks)."""
        return max(self.indexer.default_timeout, chunks * self.indexer_seconds_per_chunk)

    @staticmethod
    def _timed(
        stage: str,
        client: StageClient,
        method: str,
        request,
        context,
        timings: list | None = None,
        share: float = 1.0,
        cap: float | None = None,
    ):
        started = time.perf_counter()
        try:
            return client.call(method, request, context, share, cap)
        finally:
            seconds = time.perf_counter() - started
            metrics.STAGE_DURATION.labels(stage).observe(seconds)
            if timings is not None:
                timings.append(gateway_pb2.StageTiming(stage=stage, seconds=seconds))

    def _time_reference(self, query: str, filters) -> time_reference.TimeReference | None:
        """The past time the question names, when this gateway reads them and the request names none itself."""
        if not self.time_references or not time_reference.applies(filters):
            return None
        reference = time_reference.time_reference(query)
        if reference is not None:  # the question's own words stay off spans in privacy mode
            trace.get_current_span().set_attribute("ragmesh.time_reference", reference.describe(not self.private))
        return reference

    def _retrieve(self, tenant_id, query, filters, mode, top_k, context, timings, reranking=True, reference=None):
        if reference is not None:
            filters = time_reference.with_reference(filters, reference)
        request = retriever_pb2.RetrieveRequest(
            tenant_id=tenant_id, query=_without_question_mark(query), filters=filters, top_k=top_k, mode=mode
        )
        # View vectors only for what the reranker reads (none without reranking): several KiB a candidate.
        views = self.reranker_view_vectors if reranking else 0
        if views is not None:
            request.view_vectors_top_k = views
        response = self._timed("retrieve", self.retriever, "Retrieve", request, context, timings)
        candidates = list(response.candidates)
        if reference is not None and reference.former_only:
            candidates = time_reference.keep_former(candidates, utc_now())
        return candidates, response.query_embedding if response.HasField("query_embedding") else None

    def _retrieve_as_spelled(self, tenant_id, query, asked, filters, mode, top_k, context, timings, **options):
        """(read_as, searched, candidates, query_embedding): retrieval, and when a word of the query was
        misspelled or written around it (_read_as), retrieval again with the query as the passages spell it.
        `searched` is what retrieval and the reranker read: a question told after a story without the story's
        telling (shared.story.searched_for); the generator reads the story too. `asked`: _as_asked(query)."""
        searched = asked.searched
        candidates, query_embedding = self._retrieve(
            tenant_id, searched, filters, mode, top_k, context, timings, **options
        )
        read_as = self._read_as(query, asked.plain, candidates)
        again = self._searched(read_as or query, candidates) if self.read_misspellings else searched
        if again != searched:
            searched = again
            candidates, query_embedding = self._retrieve(
                tenant_id, searched, filters, mode, top_k, context, timings, **options
            )
        if searched != (read_as or query):
            trace.get_current_span().set_attribute(
                "ragmesh.query.searched", searched if not self.private else "[redacted]"
            )
        return read_as, searched, candidates, query_embedding

    def _as_asked(self, query: str) -> "_Asked":
        """The query without what is written around it (shared.chatter), and as first searched for: also without
        a story's telling (shared.story.searched_for), whose words are not the question's, nor its times ("I'm new
        here", "this morning") the time it asks about; both as written when the gateway reads queries so."""
        if not self.read_misspellings:
            return _Asked(query, query)
        plain = without_chatter(query)
        return _Asked(plain, searched_for(plain))

    def _searched(self, read: str, candidates: list) -> str:
        """What a question read as `read` is searched for (shared.story.searched_for): for a question told after a
        story, with the story's words that the passages a first search found best for the question write
        ("business" in "We're a business customer ..., can we get a refund?": the refund policy's business
        returns), not those only further passages write ("manager" in "My manager asked me ...")."""
        story, asked = told_and_asked(read)
        if not story:
            return read
        best = candidates[: self.rerank_top_n]
        return search_text(story, asked, content_terms(" ".join(chunk_words(c.chunk) for c in best)))

    def _search(self, request: gateway_pb2.AskRequest, question: str, context, timings: list) -> tuple:
        """(reference, read_as, searched, candidates, query_embedding) for one question: the time it names, then
        retrieval as the passages spell it (_retrieve_as_spelled)."""
        asked = self._as_asked(question)
        reference = self._time_reference(asked.searched, request.filters)
        return reference, *self._retrieve_as_spelled(
            request.tenant_id,
            question,
            asked,
            request.filters,
            request.mode,
            self.candidates,
            context,
            timings,
            reference=reference,
        )

    def _pasted_rest(self, request, query: str, searched: str, candidates: list, context, timings: list) -> str:
        """What the query asks besides a paste found among the candidates (_without_pasted), or among every version
        of the documents: a paste may come from another version than the one searched, a superseded one or one its
        own dates chose ("replaces the 2025 Refund Policy"). Empty when there is none."""
        rest = self._without_pasted(query, candidates)
        if rest or not time_reference.applies(request.filters) or not may_hold_paste(query, True):
            return rest
        return self._without_pasted(query, self._paste_candidates(request, searched, context, timings))

    def _without_pasted_parts(self, request: gateway_pb2.AskRequest, context, timings: list) -> str:
        """The message without the sentences it pasted from the passages a search for all of it finds (_without_pasted);
        empty when it pasted none."""
        asked = self._as_asked(request.question)
        return self._without_pasted(asked.plain, self._paste_candidates(request, asked.searched, context, timings))

    def _paste_candidates(self, request: gateway_pb2.AskRequest, searched: str, context, timings: list) -> list:
        """The candidates a paste is looked for among: over every version of the documents, as a paste may come from
        another than the one a question's time chose, unless the request fixes the versions itself."""
        filters = _every_version(request.filters) if time_reference.applies(request.filters) else request.filters
        candidates, _ = self._retrieve(
            request.tenant_id, searched, filters, request.mode, self.candidates, context, timings, False
        )
        return candidates

    def _without_pasted(self, query: str, candidates: list) -> str:
        """What a query asks besides the sentences it pasted from the candidates (shared.asker_quotes), when it asks
        something of its own; empty otherwise (or when the gateway reads queries as written)."""
        # A question of one sentence pastes nothing: the candidates' text is not read for it (~1 ms for 50).
        if not self.read_misspellings or not candidates or not may_hold_paste(query):
            return ""
        found = pasted_quote(query, candidates)
        if found is None or not asks_of_its_own(found[0].rest):
            return ""
        metrics.READ_AS.inc()
        return found[0].rest

    def _read_as(self, query: str, plain: str, candidates: list) -> str:
        """The query with each misspelled word read as the word of the candidates one edit from it, and without
        what is written around the question (shared.chatter); empty when there is none of either (or the gateway
        reads queries as written). `plain`: the query without what is written around it (_as_asked). The
        candidates are the tenant's passages the caller may read, so a correction never reveals another tenant's or
        a withheld document's words."""
        if not self.read_misspellings or not candidates:
            return ""
        # The passages' words are read only for a question with a word the dictionary does not know: a generator,
        # so the usual question does not pay for joining 50 candidates' text.
        # The question without a greeting, sign-off or phrase of asking around it ("Hello, could you please let me
        # know ...? Thanks!"), which the reranker would score and the generator weigh as the question's own words.
        read = spelling.corrected(plain, (chunk_words(c.chunk) for c in candidates))
        if read == query:
            return ""
        metrics.READ_AS.inc()
        trace.get_current_span().set_attribute("ragmesh.query.read_as", read if not self.private else "[redacted]")
        return read

    def _rerank(self, query, candidates, top_n, context, timings, query_embedding=None):
        """(ranked, model_id, degraded_reason). An unreachable, failing or slow reranker degrades (it
        gets only part of the caller's remaining time, so the fused order can still be answered in
        time); a bad request is still the caller's error."""
        # The retriever's query vector: the reranker need not embed the question again. Only scores come back
        # (the gateway holds the chunks), and the section text, which no reranker reads, is not sent.
        read = len(candidates) if self.reranker_reads is None else self.reranker_reads
        request = reranker_pb2.RerankRequest(
            query=_without_question_mark(query),
            candidates=candidates[:read],
            top_n=top_n,
            query_embedding=query_embedding,
            scores_only=True,
        )
        for sent in request.candidates:
            sent.chunk.ClearField("section_text")
        # Past what the reranker reads, candidates keep the first stage's order: ids and scores say all of it.
        request.candidates.extend(
            common_pb2.ScoredChunk(chunk=common_pb2.Chunk(chunk_id=c.chunk.chunk_id), scores=c.scores)
            for c in candidates[read:]
        )
        try:
            response = self._timed(
                "rerank", self.reranker, "Rerank", request, context, timings, share=RERANK_DEADLINE_SHARE
            )
        except StageCallError as err:
            if err.code == grpc.StatusCode.UNAVAILABLE:
                reason = f"reranker unavailable: {err.message}"
            elif err.downstream_code == grpc.StatusCode.DEADLINE_EXCEEDED and not _expired(context):
                reason = f"reranker too slow: {err.message}"
            else:
                raise
            log.warning("answering from the fused order: %s", reason)
            metrics.DEGRADED.labels("reranker").inc()
            return _without_view_vectors(candidates[:top_n]), "", reason
        # A reranker that does not say (an older build) may read every candidate, views included.
        self.reranker_view_vectors = response.view_vectors_top_k if response.HasField("view_vectors_top_k") else None
        self.reranker_reads = response.candidates_read if response.HasField("candidates_read") else None
        return _without_view_vectors(_in_reranked_order(candidates, response.candidates)), response.model_id, ""

    def reranker_model_id(self) -> str:
        """The model the reranker stage is serving (an empty rerank costs nothing)."""
        return self.reranker.call("Rerank", reranker_pb2.RerankRequest(query="model id", candidates=[])).model_id

    def search(self, request: gateway_pb2.SearchRequest, context) -> gateway_pb2.SearchResponse:
        check_tenant_id(request.tenant_id)
        if not request.query.strip():
            raise InvalidArgument("query", "is empty")
        self.limits.text(request.query, "query", self.limits.max_question_chars)
        self.limits.top_k(request.top_k)
        timings: list = []
        top_k = request.top_k or 10
        asked = self._as_asked(request.query)
        reference = self._time_reference(asked.searched, request.filters)
        read_as, searched, candidates, query_embedding = self._retrieve_as_spelled(
            request.tenant_id,
            request.query,
            asked,
            request.filters,
            request.mode,
            max(top_k, self.candidates if request.rerank else top_k),
            context,
            timings,
            reranking=request.rerank,
            reference=reference,
        )
        model_id, degraded = "", ""
        if request.rerank and candidates:
            candidates, model_id, degraded = self._rerank(
                searched, candidates, top_k, context, timings, query_embedding
            )
        else:
            candidates = _without_view_vectors(candidates)
        return gateway_pb2.SearchResponse(
            results=candidates[:top_k],
            reranker_model_id=model_id,
            degraded=bool(degraded),
            timings=timings,
            time_reference=reference.describe() if reference else "",
            read_as=read_as,
        )

    def ask(self, request: gateway_pb2.AskRequest, context) -> gateway_pb2.AskResponse:
        check_tenant_id(request.tenant_id)
        if not request.question.strip():
            raise InvalidArgument("question", "is empty")
        self.limits.text(request.question, "question", self.limits.max_question_chars)
        span = trace.get_current_span()
        annotate_query(span, request.tenant_id, request.question)
        timings: list = []
        # A message asking several separate questions is answered question by question (shared.questions).
        questions = separate_questions(request.question) if self.read_misspellings else [request.question]
        rest = ""
        if len(questions) > 1 and may_hold_paste(request.question):
            # A pasted paragraph's own questions ("... Can we still get them?" in a ticket) are not the asker's.
            rest = self._without_pasted_parts(request, context, timings)
            questions = separate_questions(rest) if rest else questions
        self.limits.question_parts(len(questions))
        if len(questions) == 1:
            answered = self._answer(request, request.question, context, timings, rest)
            response = answered.response(self.decision.threshold, request.include_candidates)
            return self._finish(request, response, answered.candidates, timings, span)
        span.set_attribute("ragmesh.question.parts", len(questions))
        metrics.SEPARATE_QUESTIONS.inc()
        parts = []
        for question in questions:
            with _tracer.start_as_current_span("ragmesh.question_part"):
                parts.append(self._answer(request, question, context, timings))
        response, candidates = joined_response(parts, self.decision.threshold, request.include_candidates)
        return self._finish(request, response, candidates, timings, span)

    def _answer(
        self, request: gateway_pb2.AskRequest, question: str, context, timings: list, rest: str = ""
    ) -> Answered:
        """One question through the funnel: retrieve, rerank, the calibrated decision, generate, verify. `rest`:
        what the question asks besides a paste, where that was found already (ask)."""
        span = trace.get_current_span()
        if not rest:
            reference, read_as, searched, candidates, query_embedding = self._search(
                request, question, context, timings
            )
            # Sentences pasted from a passage above the question ("Here's what the policy says: ... who approves a
            # $3000 refund?") are what the asker read, not what they ask: their words had the search find them
            # again, their dates choose the document's version ("replaces the 2025 Refund Policy"), and the answer
            # echo them.
            rest = self._pasted_rest(request, read_as or question, searched, candidates, context, timings)
        if rest:
            reference, read_as, searched, candidates, query_embedding = self._search(request, rest, context, timings)
            read_as = read_as or rest
        # The reranker orders every candidate (it rescores the head); the funnel keeps the top N.
        every, model_id, degraded = (
            self._rerank(searched, candidates, len(candidates), context, timings, query_embedding)
            if candidates
            else ([], "", "")
        )
        answered = Answered(read_as or question, every, model_id, degraded, reference, read_as)
        ranked = every[: self.rerank_top_n]
        # The evidence strength is the best reranker score among the passages kept, not the first one's:
        # a reranker fused with the first stage may put a slightly weaker passage first.
        top_score = answered.top_score = max(c.scores.rerank_score for c in ranked) if ranked else None
        calibrated = bool(model_id) and not model_id.startswith(UNCALIBRATED_RERANKERS)
        decision = should_abstain(top_score, self.decision, calibrated)
        span.set_attribute("ragmesh.abstain.threshold", self.decision.threshold)
        span.set_attribute("ragmesh.abstain.top_rerank_score", top_score if top_score is not None else float("nan"))
        span.set_attribute("ragmesh.abstain.gate_applies", calibrated)
        span.set_attribute(
            "ragmesh.abstain.decision", decision.reason or ("needs_support" if decision.needs_support else "proceed")
        )
        span.set_attribute("ragmesh.degraded", bool(degraded))
        if decision.abstain:
            answered.answer = _not_found(decision.reason)
            answered.suggested = ranked[: self.suggested_reading]
            return answered

        context_passages = context_for(searched, every, self.context_passages, self.rerank_top_n)
        generated = self._timed(
            "generate",
            self.generator,
            "Generate",
            # The rest of the funnel reads the question as the passages spell it.
            generator_pb2.GenerateRequest(query=answered.question, passages=context_passages),
            context,
            timings,
        )
        answer = generated.answer
        # Below the threshold but within the second level: answered only with enough coverage.
        if decision.needs_support and not supported(answer, top_score, self.decision):
            span.set_attribute("ragmesh.abstain.answer_coverage", answer.coverage)
            answer = _not_found(BELOW_THRESHOLD, generator_id=answer.generator_id)
        answered.context = context_passages
        if not answer.abstained:
            problem = invalid_citations(list(answer.citations), {p.chunk.chunk_id: p.chunk for p in context_passages})
            if problem:
                log.warning("answer rejected by citation validation: %s", redact(problem))
                metrics.CITATION_FAILURES.labels(problem.split(":")[0]).inc()
                span.set_attribute("ragmesh.citation_failure", redact(problem))
                answer = _not_found("citation_validation_failed", problem, generator_id=answer.generator_id)
        if answer.abstained:
            answered.suggested = ranked[: self.suggested_reading]
        answered.answer = answer
        return answered

    def _finish(self, request, response, candidates, timings, span) -> gateway_pb2.AskResponse:
        """Timings, metrics, trace attributes and the answer-log entry, for every way an ask ends."""
        response.timings.extend(timings)
        _record_answer(span, response.answer, self.private)
        span_context = span.get_span_context()
        response.trace_id = f"{span_context.trace_id:032x}" if span_context.is_valid else ""
        if self.answer_log is not None:
            response.answer_id = self.answer_log.record(
                trace_id=response.trace_id,
                tenant_id=request.tenant_id,
                query=request.question,
                candidates=[
                    {
                        "chunk_id": c.chunk.chunk_id,
                        "document_id": c.chunk.meta.document_id,
                        "version": c.chunk.meta.version,
                        "bm25_rank": c.scores.bm25_rank,
                        "dense_rank": c.scores.dense_rank,
                        "fused_score": c.scores.fused_score,
                        "rerank_score": c.scores.rerank_score,
                    }
                    for c in candidates
                ],
                context_ids=[p.chunk.chunk_id for p in response.context],
                answer=response.answer.text,
                cited_ids=[c.chunk_id for c in response.answer.citations],
                abstained=response.answer.abstained,
                reason=response.answer.reason,
                prompt_tokens=sum(p.chunk.token_count for p in response.context),
                reranker_model_id=response.reranker_model_id,
                access_scopes=list(request.filters.access_scopes),
                degraded=response.degraded,
            )
        return response

    def feedback(self, request: gateway_pb2.FeedbackRequest) -> gateway_pb2.FeedbackResponse:
        check_tenant_id(request.tenant_id)
        require(request.answer_id, "answer_id")
        self.limits.feedback(request)
        if request.rating == gateway_pb2.RATING_UNSPECIFIED:
            raise InvalidArgument("rating", "must be RATING_THUMBS_UP or RATING_THUMBS_DOWN")
        if self.answer_log is None:
            raise FailedPrecondition("the answer log is disabled on this gateway")
        row = self.answer_log.answer(request.tenant_id, request.answer_id)
        if row is None:
            raise NotFound(
                f"answer {request.answer_id!r} not in the answer log of tenant {request.tenant_id!r} "
                "(unknown, or past its retention)"
            )
        feedback_id = self.answer_log.add_feedback(
            request.answer_id,
            gateway_pb2.Rating.Name(request.rating),
            request.comment,
            request.expected_document_id,
            request.expected_version,
            request.expected_evidence,
            request.should_abstain,
        )
        return gateway_pb2.FeedbackResponse(feedback_id=feedback_id, trace_id=row["trace_id"])

    def get_chunk(self, request: retriever_pb2.GetChunkRequest, context) -> gateway_pb2.ChunkView:
        check_tenant_id(request.tenant_id)
        found = self.retriever.call(
            "GetChunk",
            retriever_pb2.GetChunkRequest(
                tenant_id=request.tenant_id, chunk_id=request.chunk_id, access_scopes=request.access_scopes
            ),
            context,
        )
        chunk = found.chunk
        chunk.ClearField("views")  # the reranker's, not the caller's (see _without_view_vectors)
        start = chunk.section_text.find(chunk.body)
        start = max(start, 0)
        return gateway_pb2.ChunkView(chunk=chunk, highlight_start=start, highlight_end=start + len(chunk.body))

    def delete_document(self, request, context):
        check_tenant_id(request.tenant_id)
        request.guard.CopyFrom(caller_guard())  # the key's scopes, never the caller's claim
        return self.indexer.call("DeleteDocument", request, context)


class _Asked(typing.NamedTuple):
    plain: str  # without what is written around it
    searched: str  # what a first search reads: also without a story's telling


def _every_version(filters: common_pb2.SearchFilters) -> common_pb2.SearchFilters:
    """The request's filters (tenant, scopes, documents), over every version of each document."""
    widened = common_pb2.SearchFilters()
    widened.CopyFrom(filters)
    widened.include_superseded = True
    return widened


def _without_question_mark(query: str) -> str:
    """What the retriever and the reranker read of a query: without the question marks closing it, which say how it
    is asked (the generator reads them), not what about. The embedding and the reranker's scores moved with one, so
    the same question crossed the calibrated threshold one way or the other: with a "?" added to every labelled
    question that had none, 14 outcomes changed (7 right answers lost, 4 gained, 1 false answer more)."""
    return query.rstrip().rstrip("?").rstrip() or query


def _expired(context) -> bool:
    remaining = context.time_remaining() if context is not None else None
    return remaining is not None and remaining <= 0


def _record_answer(span, answer: common_pb2.Answer, private: bool) -> None:
    outcome = "abstained" if answer.abstained else "answered"
    metrics.ANSWERS.labels(outcome).inc()
    if answer.abstained:
        metrics.ABSTENTIONS.labels(answer.reason.split(":")[0]).inc()
    span.set_attribute("ragmesh.answer.abstained", answer.abstained)
    span.set_attribute("ragmesh.answer.reason", answer.reason.split(":")[0] if private else answer.reason)
    span.set_attribute("ragmesh.answer.text", redact(answer.text) if private else answer.text)
    span.set_attribute("ragmesh.answer.cited_chunk_ids", [c.chunk_id for c in answer.citations])


def _not_found(reason: str, detail: str = "", generator_id: str = "") -> common_pb2.Answer:
    missing = {
        "below_threshold": "no indexed passage is relevant enough to answer this question",
        "no_candidates": "nothing in the index matches this question for this tenant and its filters",
        "citation_validation_failed": "a verifiable answer (the generated one failed citation checks)",
    }.get(reason, "")
    return common_pb2.Answer(
        text="",
        abstained=True,
        reason=reason + (f": {detail}" if detail else ""),
        missing=missing,
        generator_id=generator_id,
    )


def _in_reranked_order(candidates: list, ranking) -> list:
    """The gateway's own candidates (full chunks) in the reranker's order, each with the scores the reranker
    returned for its chunk id."""
    by_id = {c.chunk.chunk_id: c for c in candidates}
    ranked = []
    for scored in ranking:
        own = by_id.get(scored.chunk.chunk_id)
        if own is None:
            raise RagmeshError(f"reranker stage returned chunk {scored.chunk.chunk_id!r}, which it was not given")
        own.scores.CopyFrom(scored.scores)
        ranked.append(own)
    return ranked


def _without_view_vectors(candidates: list) -> list:
    """Drops the stored view vectors (several KiB a chunk, for the reranker only) from candidates before
    they go to the generator or back to a caller: Search and Ask answers stay as small as before. The
    reranker's per-unit similarities (StageScores.unit_similarity), which answer selection reads, stay."""
    for candidate in candidates:
        candidate.chunk.ClearField("views")
    return candidates
