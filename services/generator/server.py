"""gRPC face of the generator."""

import dataclasses

from services.generator.extractive import ExtractiveGenerator
from shared import config, convert
from shared.config import ServerConfig
from shared.errors import InvalidArgument
from shared.server import serve
from shared.stubs import generator_pb2, generator_pb2_grpc


@dataclasses.dataclass(frozen=True)
class GeneratorConfig(ServerConfig):
    port: int = config.DEFAULT_PORTS["generator"]
    backend: str = "extractive"
    max_units: int = 3


class GeneratorServicer(generator_pb2_grpc.GeneratorServicer):
    def __init__(self, generator):
        self.generator = generator

    def Generate(self, request, context):
        if not request.query.strip():
            raise InvalidArgument("query", "is empty")
        answer = self.generator.run(request.query, [convert.scored_from_pb(p) for p in request.passages])
        return generator_pb2.GenerateResponse(answer=convert.answer_to_pb(answer))


def main() -> None:
    cfg = config.load(GeneratorConfig, "generator")
    if cfg.backend != "extractive":
        raise SystemExit(f"RAGMESH_GENERATOR_BACKEND={cfg.backend!r}: supported backends are 'extractive'")
    generator = ExtractiveGenerator(cfg.max_units)

    def register(server):
        generator.warm_up()
        generator_pb2_grpc.add_GeneratorServicer_to_server(GeneratorServicer(generator), server)
        return [generator_pb2.DESCRIPTOR.services_by_name["Generator"].full_name]

    serve("generator", cfg, register)


if __name__ == "__main__":
    main()
