"""gRPC face of the reranker."""

from opentelemetry.trace import SpanKind

from services.reranker.base import Reranker
from services.reranker.cross_encoder import CrossEncoderReranker, TritonScorer, resolve_scorer
from services.reranker.service import MaxSimReranker, PassthroughReranker
from shared import config, convert
from shared.config import RerankerConfig
from shared.embedding import build_embedder, build_query_embedder
from shared.errors import InvalidArgument
from shared.observability.metrics import RERANK_BATCH
from shared.observability.tracing import annotate_candidates, annotate_documents, tracer
from shared.server import serve
from shared.stubs import reranker_pb2, reranker_pb2_grpc


class RerankerServicer(reranker_pb2_grpc.RerankerServicer):
    def __init__(self, reranker: Reranker, default_top_n: int):
        self.reranker = reranker
        self.default_top_n = default_top_n

    def Rerank(self, request, context):
        if request.top_n < 0:
            raise InvalidArgument("top_n", "must not be negative")
        candidates = [convert.scored_from_pb(c) for c in request.candidates]
        RERANK_BATCH.observe(len(candidates))
        with tracer().start_as_current_span("rerank", kind=SpanKind.INTERNAL) as span:
            span.set_attribute("ragmesh.rerank.model_id", self.reranker.model_id)
            top_n = request.top_n or self.default_top_n
            # Scored with the retriever's query vector when it is of the model this reranker embeds queries with.
            model = self.reranker.query_model_id if request.HasField("query_embedding") else ""
            vector = convert.query_vector_from_pb(request.query_embedding, model) if model else None
            ranked = self.reranker.run(request.query, candidates, top_n, query_vector=vector)
            annotate_candidates(span, "ragmesh.rerank", ranked)
            annotate_documents(span, ranked, "rerank_score")
        if request.scores_only:  # the caller holds the chunks: only the order and the scores travel back
            returned = [convert.ranking_to_pb(c) for c in ranked]
        else:
            for sc in ranked:
                sc.chunk.views = None  # read here; no later stage needs them back
            returned = [convert.scored_to_pb(c) for c in ranked]
        return reranker_pb2.RerankResponse(
            candidates=returned,
            model_id=self.reranker.model_id,
            model_version=self.reranker.model_version,
            view_vectors_top_k=self.reranker.view_vectors_read,
            candidates_read=self.reranker.candidates_read,
        )

    def ForgetChunks(self, request, context):
        forget = getattr(self.reranker, "forget", None)
        if forget is None:  # a reranker without a per-chunk cache holds nothing to forget
            return reranker_pb2.ForgetChunksResponse()
        removed, remaining, before, after = forget(list(request.chunk_ids))
        return reranker_pb2.ForgetChunksResponse(
            removed=removed, remaining=remaining, cached_before=before, cached_after=after
        )


def build_reranker(cfg: RerankerConfig) -> Reranker:
    def maxsim() -> MaxSimReranker:
        embedder = build_embedder(cfg.embed_model, threads=cfg.embed_threads)
        return MaxSimReranker(
            embedder,
            cfg.rescore_k,
            fusion_weight=cfg.maxsim_fusion_weight,
            query_embedder=build_query_embedder(
                cfg.embed_model, cfg.embed_query_variant, threads=cfg.embed_threads, passages=embedder
            ),
        )

    if cfg.model == "maxsim":
        return maxsim()
    if cfg.model == "passthrough":
        return PassthroughReranker()
    if cfg.model == "triton":
        return CrossEncoderReranker(
            TritonScorer(cfg.triton_address, cfg.triton_model, cfg.triton_timeout_s), cfg.cross_encoder_k, maxsim
        )
    if cfg.model == "cross-encoder":
        scorer = resolve_scorer(
            cfg.cross_encoder, config.expand(cfg.cache), cfg.cross_encoder_threads, cfg.cross_encoder_variant
        )
        if scorer is None:
            raise SystemExit(
                "RAGMESH_RERANKER_MODEL=cross-encoder: no model to load; run `ragmesh train-reranker` "
                "or set RAGMESH_RERANKER_CROSS_ENCODER to a model folder or hub name"
            )
        return CrossEncoderReranker(scorer, cfg.cross_encoder_k, maxsim)
    raise SystemExit(f"RAGMESH_RERANKER_MODEL={cfg.model!r}: expected maxsim, triton, cross-encoder or passthrough")


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
