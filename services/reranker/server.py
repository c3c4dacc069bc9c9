"""gRPC face of the reranker."""

import dataclasses

from opentelemetry.trace import SpanKind

from services.reranker.service import MaxSimReranker, PassthroughReranker
from shared import config, convert
from shared.config import ServerConfig
from shared.embedding import build_embedder
from shared.errors import InvalidArgument
from shared.observability.metrics import RERANK_BATCH
from shared.observability.tracing import annotate_candidates, annotate_documents, tracer
from shared.server import serve
from shared.stubs import reranker_pb2, reranker_pb2_grpc


@dataclasses.dataclass(frozen=True)
class RerankerConfig(ServerConfig):
    port: int = config.DEFAULT_PORTS["reranker"]
    metrics_port: int = config.DEFAULT_METRICS_PORTS["reranker"]
    # maxsim | passthrough
    model: str = "maxsim"
    embed_model: str = config.DEFAULT_EMBED_MODEL
    embed_threads: int = 1
    rescore_k: int = 20
    top_n: int = 8


class RerankerServicer(reranker_pb2_grpc.RerankerServicer):
    def __init__(self, reranker, default_top_n: int):
        self.reranker = reranker
        self.default_top_n = default_top_n

    def Rerank(self, request, context):
        if request.top_n < 0:
            raise InvalidArgument("top_n", "must not be negative")
        candidates = [convert.scored_from_pb(c) for c in request.candidates]
        RERANK_BATCH.observe(len(candidates))
        with tracer().start_as_current_span("rerank", kind=SpanKind.INTERNAL) as span:
            span.set_attribute("ragmesh.rerank.model_id", self.reranker.model_id)
            ranked = self.reranker.run(request.query, candidates, request.top_n or self.default_top_n)
            annotate_candidates(span, "ragmesh.rerank", ranked)
            annotate_documents(span, ranked, "rerank_score")
        return reranker_pb2.RerankResponse(
            candidates=[convert.scored_to_pb(c) for c in ranked],
            model_id=self.reranker.model_id, model_version=self.reranker.model_version,
        )


def build_reranker(cfg: RerankerConfig):
    if cfg.model == "maxsim":
        return MaxSimReranker(build_embedder(cfg.embed_model, threads=cfg.embed_threads), cfg.rescore_k)
    if cfg.model == "passthrough":
        return PassthroughReranker()
    raise SystemExit(f"RAGMESH_RERANKER_MODEL={cfg.model!r}: expected 'maxsim' or 'passthrough'")


def main() -> None:
    cfg = config.load(RerankerConfig, "reranker")
    reranker = build_reranker(cfg)

    def register(server):
        reranker.warm_up()
        reranker_pb2_grpc.add_RerankerServicer_to_server(RerankerServicer(reranker, cfg.top_n), server)
        return [reranker_pb2.DESCRIPTOR.services_by_name["Reranker"].full_name]

    serve("reranker", cfg, register)


if __name__ == "__main__":
    main()
