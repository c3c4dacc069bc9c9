"""gRPC face of the retriever."""

from opentelemetry.trace import SpanKind

from services.retriever.service import HybridRetriever
from shared import config, convert
from shared.config import RetrieverConfig
from shared.embedding import build_query_embedder
from shared.errors import InvalidArgument
from shared.index.factory import open_index
from shared.observability.metrics import CANDIDATES
from shared.observability.tracing import annotate_candidates, annotate_documents, annotate_query, tracer
from shared.server import serve
from shared.stubs import retriever_pb2, retriever_pb2_grpc


class RetrieverServicer(retriever_pb2_grpc.RetrieverServicer):
    def __init__(self, retriever: HybridRetriever):
        self.retriever = retriever

    def Retrieve(self, request, context):
        mode = convert.mode_from_pb(request.mode)
        if mode is None:  # proto3 enums are open: an unknown number arrives as itself, not as hybrid
            raise InvalidArgument("mode", f"{request.mode} is not a retrieval mode ({convert.describe_modes()})")
        if request.view_vectors_top_k < 0:
            raise InvalidArgument("view_vectors_top_k", f"must not be negative (got {request.view_vectors_top_k})")
        with tracer().start_as_current_span("retrieval", kind=SpanKind.INTERNAL) as span:
            span.set_attribute("gen_ai.operation.name", "retrieval")
            span.set_attribute("ragmesh.retrieval.mode", mode)
            annotate_query(span, request.tenant_id, request.query)
            results, query_vector = self.retriever.search(
                request.tenant_id, request.query, convert.filters_from_pb(request.filters), mode, request.top_k
            )
            annotate_candidates(span, "ragmesh.retrieval", results)
            annotate_documents(span, results, "fused_score")
        CANDIDATES.labels(mode).observe(len(results))
        if request.HasField("view_vectors_top_k"):  # the caller's reranker reads no further
            for result in results[request.view_vectors_top_k :]:
                result.chunk.views = None
        return retriever_pb2.RetrieveResponse(
            candidates=[convert.scored_to_pb(r) for r in results],
            embedding_model_id=self.retriever.model_id,
            backend=self.retriever.index.name,
            query_embedding=None
            if query_vector is None
            else convert.query_embedding_to_pb(self.retriever.query_encoder, query_vector),
        )

    def GetChunk(self, request, context):
        chunk = self.retriever.get_chunk(request.tenant_id, request.chunk_id, list(request.access_scopes))
        return retriever_pb2.GetChunkResponse(chunk=convert.chunk_to_pb(chunk))

    def Forget(self, request, context):
        # Only the embedded index keeps rows in this process (its k-NN views); OpenSearch keeps none here.
        forget = getattr(self.retriever.index, "forget_tenant", None)
        dropped = bool(forget and forget(request.tenant_id))
        return retriever_pb2.ForgetResponse(views_dropped=int(dropped), backend=self.retriever.index.name)


def main() -> None:
    cfg = config.load(RetrieverConfig, "retriever")
    retriever = HybridRetriever(
        open_index(cfg.index, cfg.data_dir, embed_model=cfg.embed_model),
        build_query_embedder(cfg.embed_model, cfg.embed_query_variant, threads=cfg.embed_threads),
        rrf_k=cfg.rrf_k,
        per_retriever_k=cfg.per_retriever_k,
        default_top_k=cfg.top_k,
    )

    def register(server):
        retriever.warm_up()
        retriever_pb2_grpc.add_RetrieverServicer_to_server(RetrieverServicer(retriever), server)
        return [retriever_pb2.DESCRIPTOR.services_by_name["Retriever"].full_name]

    serve("retriever", cfg, register)


if __name__ == "__main__":
    main()
