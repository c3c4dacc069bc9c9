"""gRPC face of the chunker."""

from services.chunker.service import DocumentChunker
from shared import config, convert
from shared.config import ChunkerConfig
from shared.server import serve
from shared.stubs import chunker_pb2, chunker_pb2_grpc, common_pb2


class ChunkerServicer(chunker_pb2_grpc.ChunkerServicer):
    def __init__(self, chunker: DocumentChunker):
        self.chunker = chunker

    def ChunkDocument(self, request, context):
        meta, chunks, statements = self.chunker.chunk(
            request.document.content, convert.meta_from_pb(request.document.meta)
        )
        return chunker_pb2.ChunkDocumentResponse(
            meta=convert.meta_to_pb(meta),
            chunks=[convert.chunk_to_pb(c) for c in chunks],
            chunker_id=self.chunker.chunker_id,
            statements=[
                common_pb2.GovernanceStatement(field=s.field, value=s.value, evidence=s.evidence, source=s.source)
                for s in statements
            ],
        )


def main() -> None:
    cfg = config.load(ChunkerConfig, "chunker")
    chunker = DocumentChunker(
        cfg.embed_model, cfg.max_tokens, cfg.overlap_ratio, cfg.max_bytes, cfg.strategy, cfg.missing_scopes
    )

    def register(server):
        chunker.warm_up()
        chunker_pb2_grpc.add_ChunkerServicer_to_server(ChunkerServicer(chunker), server)
        return [chunker_pb2.DESCRIPTOR.services_by_name["Chunker"].full_name]

    serve("chunker", cfg, register)


if __name__ == "__main__":
    main()
