"""gRPC face of the gateway."""

import dataclasses
import os

from services.gateway.answer_log import AnswerLog
from services.gateway.funnel import Funnel
from shared import config
from shared.config import ServerConfig
from shared.errors import InvalidArgument, require
from shared.server import serve
from shared.stubs import gateway_pb2, gateway_pb2_grpc


@dataclasses.dataclass(frozen=True)
class GatewayConfig(ServerConfig):
    port: int = config.DEFAULT_PORTS["gateway"]
    metrics_port: int = config.DEFAULT_METRICS_PORTS["gateway"]
    # Top reranker score below which the gateway abstains without calling the generator.
    abstain_threshold: float = 0.35
    candidates: int = 50
    rerank_top_n: int = 8
    context_passages: int = 5
    max_documents_per_ingest: int = 1000
    data_dir: str = ".ragmesh-data"
    answer_log_retention_days: float = 30.0


class GatewayServicer(gateway_pb2_grpc.GatewayServicer):
    def __init__(self, funnel: Funnel, max_documents: int):
        self.funnel = funnel
        self.max_documents = max_documents

    def Ingest(self, request, context):
        require(request.tenant_id, "tenant_id")
        if len(request.documents) > self.max_documents:
            raise InvalidArgument("documents",
                                  f"{len(request.documents)} documents, over the limit of {self.max_documents}")
        yield from self.funnel.ingest(request.tenant_id, request.documents, context)

    def Search(self, request, context):
        return self.funnel.search(request, context)

    def Ask(self, request, context):
        return self.funnel.ask(request, context)

    def GetChunk(self, request, context):
        return self.funnel.get_chunk(request, context)

    def DeleteDocument(self, request, context):
        return self.funnel.delete_document(request, context)

    def Feedback(self, request, context):
        return self.funnel.feedback(request)


def main() -> None:
    cfg = config.load(GatewayConfig, "gateway")
    addresses = {stage: config.stage_address(stage) for stage in config.STAGES if stage != "gateway"}
    answer_log = AnswerLog(os.path.join(cfg.data_dir, "answers.sqlite"), cfg.answer_log_retention_days)
    funnel = Funnel(addresses, cfg.abstain_threshold, cfg.candidates, cfg.rerank_top_n, cfg.context_passages,
                    answer_log=answer_log)

    def register(server):
        answer_log.warm_up()
        gateway_pb2_grpc.add_GatewayServicer_to_server(GatewayServicer(funnel, cfg.max_documents_per_ingest), server)
        return [gateway_pb2.DESCRIPTOR.services_by_name["Gateway"].full_name]

    serve("gateway", cfg, register)


if __name__ == "__main__":
    main()
