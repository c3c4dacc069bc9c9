"""gRPC face of the gateway."""

import ipaddress
import logging
import os
import time

from services.gateway.admission import Admission
from services.gateway.answer_log import AnswerLog
from services.gateway.auth import AuthInterceptor, caller_reads_any
from services.gateway.erasure import REPORTS_DIR, Eraser, pseudonym_map_store
from services.gateway.funnel import Funnel
from services.gateway.limits import RequestLimits
from services.gateway.review import FeedbackReview
from services.gateway.scope_readers import ScopeReaders
from shared import calibration, config
from shared.calibration import AnswerDecision
from shared.config import GatewayConfig
from shared.errors import FailedPrecondition, InvalidArgument
from shared.keys import KEYS_FILE, KeyStore
from shared.names import check_tenant_id
from shared.ratelimit import TokenBuckets
from shared.server import serve
from shared.stubs import gateway_pb2, gateway_pb2_grpc, indexer_pb2

log = logging.getLogger("ragmesh.gateway")


class GatewayServicer(gateway_pb2_grpc.GatewayServicer):
    def __init__(
        self, funnel: Funnel, max_documents: int, eraser: Eraser | None = None, admission: Admission | None = None
    ):
        self.funnel = funnel
        self.admission = admission or Admission(0)
        self.max_documents = max_documents
        self.eraser = eraser
        self.review = FeedbackReview(funnel.answer_log)

    def Ingest(self, request, context):
        check_tenant_id(request.tenant_id)
        if len(request.documents) > self.max_documents:
            raise InvalidArgument(
                "documents", f"{len(request.documents)} documents, over the limit of {self.max_documents}"
            )
        yield from self.funnel.ingest(request.tenant_id, request.documents, context)

    def Search(self, request, context):
        with self.admission.slot("Search", context):
            return self.funnel.search(request, context)

    def Ask(self, request, context):
        with self.admission.slot("Ask", context):
            return self.funnel.ask(request, context)

    def GetChunk(self, request, context):
        return self.funnel.get_chunk(request, context)

    def DeleteDocument(self, request, context):
        return self.funnel.delete_document(request, context)

    def Feedback(self, request, context):
        return self.funnel.feedback(request)

    def Erase(self, request, context):
        if self.eraser is None:
            raise FailedPrecondition("erasure is not configured on this gateway")
        return self.eraser.erase(request, context)

    def ListDocuments(self, request, context):
        check_tenant_id(request.tenant_id)
        page = indexer_pb2.IndexerListDocumentsRequest(
            tenant_id=request.tenant_id, page_size=request.page_size, page_token=request.page_token
        )
        stored = self.funnel.indexer.call("ListDocuments", page, context)
        # A title and a path are content too: a key lists only the versions it could read (so a page may
        # come back short, or empty, and still have a next one).
        return gateway_pb2.ListDocumentsResponse(
            documents=[d for d in stored.documents if caller_reads_any(d.access_scopes)],
            next_page_token=stored.next_page_token,
        )

    def ListFeedback(self, request, context):
        return self.review.list_feedback(request)

    def RecordFeedbackExport(self, request, context):
        return self.review.record_export(request)


def resolve_decision(cfg: GatewayConfig, funnel: Funnel, wait_seconds: float = 120.0) -> AnswerDecision:
    """The calibrated decision (threshold, and its second level if it has one) when a calibration file exists;
    start-up is refused when it was calibrated for a different reranker than the one serving (its scores mean
    something else)."""
    if cfg.calibration_file in ("", "none") or not os.path.exists(cfg.calibration_file):
        log.info("abstain threshold %.3f (configured; no calibration file)", cfg.abstain_threshold)
        return AnswerDecision(cfg.abstain_threshold)
    calibrated = calibration.load(cfg.calibration_file)
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            serving = funnel.reranker_model_id()
            break
        except Exception as err:  # noqa: BLE001 - the reranker may still be starting
            if time.monotonic() > deadline:
                raise SystemExit(f"gateway: cannot check the calibration, reranker unreachable: {err}") from None
            time.sleep(0.5)
    if serving != calibrated.reranker_model_id:
        raise SystemExit(
            f"gateway: {cfg.calibration_file} was calibrated for reranker {calibrated.reranker_model_id!r}, "
            f"but {serving!r} is serving; run `ragmesh calibrate` for this model or set "
            "RAGMESH_GATEWAY_CALIBRATION_FILE=none"
        )
    log.info(
        "abstain threshold %.4f calibrated for %s (false-answer rate %.3f on %s)",
        calibrated.threshold,
        serving,
        calibrated.false_answer_rate,
        calibrated.source,
    )
    if calibrated.support_threshold is not None:
        log.info(
            "below it, answered from %.4f when the answer covers %.2f of the question",
            calibrated.support_threshold,
            calibrated.min_coverage,
        )
    return calibrated.decision()


def auth_interceptors(cfg: GatewayConfig) -> list:
    """The authentication interceptor, or none when it is explicitly disabled on a loopback address."""
    if not cfg.auth_disabled:
        return [
            AuthInterceptor(
                KeyStore(cfg.keys_file or os.path.join(cfg.data_dir, KEYS_FILE)),
                TokenBuckets(cfg.rate_limit_per_second, cfg.rate_limit_burst),
            )
        ]
    if not is_loopback(cfg.host):
        raise SystemExit(
            f"gateway: refusing to start on {cfg.host} with authentication off "
            "(RAGMESH_GATEWAY_AUTH_DISABLED is for local development on a loopback address)"
        )
    return []


def log_auth_mode(cfg: GatewayConfig, interceptors: list) -> None:
    if not interceptors:
        for _ in range(3):
            log.warning(
                "AUTHENTICATION IS OFF (RAGMESH_GATEWAY_AUTH_DISABLED): any local caller may read and "
                "write any tenant and scope; for local development only"
            )
        return
    store = interceptors[0].auth.store
    log.info("API keys from %s (%d)", store.path, len(store.list()))
    if not store.list():
        log.warning("no API keys in %s: every call is refused until `ragmesh keys create` makes one", store.path)
    if not is_loopback(cfg.host):
        log.warning("gateway on %s: bearer keys travel in clear text unless TLS terminates in front of it", cfg.host)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def main() -> None:
    cfg = config.load(GatewayConfig, "gateway")
    interceptors = auth_interceptors(cfg)
    addresses = {stage: config.stage_address(stage) for stage in config.STAGES if stage != "gateway"}
    # Written in the background: an Ask does not wait for the log's commit (see answer_log's docstring).
    answer_log = AnswerLog(os.path.join(cfg.data_dir, "answers.sqlite"), cfg.answer_log_retention_days, background=True)
    funnel = Funnel(
        addresses,
        AnswerDecision(cfg.abstain_threshold),
        cfg.candidates,
        cfg.rerank_top_n,
        cfg.context_passages,
        answer_log=answer_log,
        time_references=cfg.time_references,
        read_misspellings=cfg.read_misspellings,
        timeouts=cfg.stage_timeouts(),
        indexer_seconds_per_chunk=cfg.indexer_seconds_per_chunk,
        request_limits=RequestLimits(
            cfg.max_question_chars, cfg.max_top_k, cfg.max_feedback_chars, cfg.max_question_parts
        ),
        scope_readers=ScopeReaders(interceptors[0].auth.store if interceptors else None),
    )

    def register(server):
        log_auth_mode(cfg, interceptors)
        answer_log.warm_up()
        funnel.decision = resolve_decision(cfg, funnel)
        eraser = Eraser(
            funnel.indexer,
            funnel.retriever,
            funnel.reranker,
            answer_log,
            os.path.join(cfg.data_dir, REPORTS_DIR),
            extra_stores=[pseudonym_map_store(cfg.data_dir)],
        )
        log.info(
            "Asks and Searches at once: %s (RAGMESH_GATEWAY_MAX_IN_FLIGHT); %d gRPC threads",
            cfg.max_in_flight or "no limit",
            cfg.max_workers,
        )
        gateway_pb2_grpc.add_GatewayServicer_to_server(
            GatewayServicer(funnel, cfg.max_documents_per_ingest, eraser, Admission(cfg.max_in_flight)), server
        )
        return [gateway_pb2.DESCRIPTOR.services_by_name["Gateway"].full_name]

    serve("gateway", cfg, register, interceptors)
    answer_log.close()  # the answers still queued, written after the last call has drained


if __name__ == "__main__":
    main()
