"""gRPC face of the indexer."""

import dataclasses

from services.indexer.service import DocumentIndexer
from shared import config, convert
from shared.config import IndexerConfig
from shared.embedding import build_embedder
from shared.errors import InvalidArgument, require
from shared.index.factory import open_index
from shared.index.listing import list_page
from shared.observability.metrics import INDEX_CHUNKS, SOURCE_CHANGED
from shared.server import serve
from shared.stubs import indexer_pb2, indexer_pb2_grpc


class IndexerServicer(indexer_pb2_grpc.IndexerServicer):
    def __init__(self, indexer: DocumentIndexer):
        self.indexer = indexer

    def UpsertDocument(self, request, context):
        meta = convert.meta_from_pb(request.meta)
        chunks = [convert.chunk_from_pb(c) for c in request.chunks]
        for chunk in chunks:
            chunk.meta = meta
        result = self.indexer.upsert(meta, chunks, _held(request.guard), caller_waits=context.is_active)
        if result.replaced_existing and (result.written or result.removed):
            SOURCE_CHANGED.inc()
        INDEX_CHUNKS.labels(self.indexer.index.name).set(self.indexer.index.count_chunks())
        return indexer_pb2.UpsertDocumentResponse(
            chunks_written=result.written,
            chunks_unchanged=result.unchanged,
            chunks_removed=result.removed,
            embedding_model_id=self.indexer.model_id,
        )

    def DeleteDocument(self, request, context):
        removed = self.indexer.delete(request.tenant_id, request.document_id, _held(request.guard))
        INDEX_CHUNKS.labels(self.indexer.index.name).set(self.indexer.index.count_chunks())
        return indexer_pb2.DeleteDocumentResponse(chunks_removed=removed)

    def Erase(self, request, context):
        if not request.whole_tenant and not request.document_id:
            raise InvalidArgument("document_id", "name a document, or set whole_tenant")
        if request.whole_tenant and request.document_id:
            raise InvalidArgument("whole_tenant", "erases every document; do not also name one")
        document_id = None if request.whole_tenant else request.document_id
        result = self.indexer.erase(request.tenant_id, document_id, _held(request.guard))
        INDEX_CHUNKS.labels(self.indexer.index.name).set(self.indexer.index.count_chunks())
        return indexer_pb2.IndexerEraseResponse(
            document_ids=result.document_ids,
            chunk_ids=result.chunk_ids,
            probes=result.probes,
            stores=[indexer_pb2.StoreCheck(**dataclasses.asdict(c)) for c in result.checks],
        )

    def ListDocuments(self, request, context):
        require(request.tenant_id, "tenant_id")
        versions, next_token = list_page(self.indexer.index, request.tenant_id, request.page_token, request.page_size)
        return indexer_pb2.IndexerListDocumentsResponse(
            documents=[indexer_pb2.StoredDocument(**dataclasses.asdict(v)) for v in versions],
            next_page_token=next_token,
        )

    def Supersede(self, request, context):
        updated = self.indexer.supersede(
            request.tenant_id, request.document_id, request.effective_to, _held(request.guard)
        )
        return indexer_pb2.SupersedeResponse(chunks_updated=updated)

    def Stats(self, request, context):
        stats = self.indexer.index.stats(request.tenant_id)
        return indexer_pb2.StatsResponse(
            chunk_count=stats["chunks"],
            document_count=stats["documents"],
            embedding_model_id=self.indexer.model_id,
            backend=self.indexer.index.name,
        )


def _held(guard) -> list[str] | None:
    """The scopes a guarded write may touch; None when the request carries no guard."""
    return list(guard.held_scopes) if guard.enabled else None


def main() -> None:
    cfg = config.load(IndexerConfig, "indexer")
    indexer = DocumentIndexer(
        open_index(cfg.index, cfg.data_dir, embed_model=cfg.embed_model),
        build_embedder(cfg.embed_model, threads=cfg.embed_threads),
    )

    def register(server):
        indexer.warm_up()
        INDEX_CHUNKS.labels(indexer.index.name).set(indexer.index.count_chunks())
        indexer_pb2_grpc.add_IndexerServicer_to_server(IndexerServicer(indexer), server)
        return [indexer_pb2.DESCRIPTOR.services_by_name["Indexer"].full_name]

    serve("indexer", cfg, register)


if __name__ == "__main__":
    main()
