"""gRPC face of the generator."""

import os

from opentelemetry.trace import SpanKind

from services.generator.base import Generator
from services.generator.extractive import ExtractiveGenerator
from services.generator.learned import ReadingGenerator, SelectingGenerator
from services.generator.llm import LlamaCppBackend, LLMGenerator, OpenAICompatibleBackend
from services.generator.privacy import PseudonymisingGenerator
from shared import config, convert
from shared.config import GeneratorConfig
from shared.errors import InvalidArgument
from shared.observability.tracing import tracer
from shared.privacy import Pseudonymiser, redact, strict
from shared.server import serve
from shared.stubs import generator_pb2, generator_pb2_grpc


class GeneratorServicer(generator_pb2_grpc.GeneratorServicer):
    def __init__(self, generator: Generator):
        self.generator = generator

    def Generate(self, request, context):
        if not request.query.strip():
            raise InvalidArgument("query", "is empty")
        passages = [convert.scored_from_pb(p) for p in request.passages]
        with tracer().start_as_current_span("generate", kind=SpanKind.INTERNAL) as span:
            span.set_attribute("ragmesh.generator.id", self.generator.generator_id)
            # GenAI semantic conventions: what ran, and whose model.
            operation = "chat" if isinstance(self.generator, LLMGenerator) else "extract"
            span.set_attribute("gen_ai.operation.name", operation)
            span.set_attribute("gen_ai.provider.name", _provider(self.generator))
            span.set_attribute("gen_ai.request.model", self.generator.generator_id)
            span.set_attribute("ragmesh.generator.context_chunk_ids", [p.chunk.chunk_id for p in passages])
            # Prompt size: what the generator reads (for the extractive backend, the passages).
            span.set_attribute("gen_ai.usage.input_tokens", sum(p.chunk.token_count for p in passages))
            answer = self.generator.run(request.query, passages)
            if span.is_recording():  # redact() reads the mesh's settings: 9% of this stage's CPU per call
                span.set_attribute("ragmesh.answer.text", redact(answer.text))
                span.set_attribute("ragmesh.answer.cited_chunk_ids", [c.chunk_id for c in answer.citations])
                span.set_attribute("ragmesh.answer.abstained", answer.abstained)
                span.set_attribute("ragmesh.answer.reason", answer.reason)
        return generator_pb2.GenerateResponse(answer=convert.answer_to_pb(answer))


def _provider(generator: Generator) -> str:
    backend = getattr(generator, "backend", None)
    if isinstance(backend, LlamaCppBackend):
        return "llama.cpp"
    if isinstance(backend, OpenAICompatibleBackend):
        return "openai"
    return "ragmesh"


def build_generator(cfg: GeneratorConfig) -> Generator:
    if cfg.backend == "extractive":
        if cfg.reader_card not in ("", "none"):
            if not os.path.exists(cfg.reader_card):
                raise SystemExit(
                    f"RAGMESH_GENERATOR_READER_CARD={cfg.reader_card}: no such file; fit one with "
                    "`ragmesh fit-reader-decision`, or set it to none"
                )
            return ReadingGenerator(cfg.reader_card, cfg.max_units)
        if cfg.selector_card in ("", "none"):
            return ExtractiveGenerator(cfg.max_units)
        if not os.path.exists(cfg.selector_card):
            raise SystemExit(
                f"RAGMESH_GENERATOR_SELECTOR_CARD={cfg.selector_card}: no such file; train one with "
                "`ragmesh train-selector`, or set it to none for the coverage rule"
            )
        return SelectingGenerator(cfg.selector_card, cfg.max_units)
    if cfg.backend == "llamacpp":
        return LLMGenerator(
            LlamaCppBackend(cfg.model_path, cfg.threads), cfg.max_tokens, cfg.section_token_budget, cfg.llm_passages
        )
    if cfg.backend == "openai":
        if not cfg.openai_url:
            raise SystemExit("RAGMESH_GENERATOR_BACKEND=openai needs RAGMESH_GENERATOR_OPENAI_URL")
        backend = OpenAICompatibleBackend(cfg.openai_url, cfg.openai_model, cfg.openai_api_key)
        llm = LLMGenerator(backend, cfg.max_tokens, cfg.section_token_budget, cfg.llm_passages)
        # Strict privacy: text leaves the process here, so personal data is pseudonymised first.
        return PseudonymisingGenerator(llm, Pseudonymiser(cfg.data_dir)) if strict() else llm
    raise SystemExit(f"RAGMESH_GENERATOR_BACKEND={cfg.backend!r}: expected extractive, llamacpp or openai")


def main() -> None:
    cfg = config.load(GeneratorConfig, "generator")
    generator = build_generator(cfg)

    def register(server):
        generator.warm_up()
        generator_pb2_grpc.add_GeneratorServicer_to_server(GeneratorServicer(generator), server)
        return [generator_pb2.DESCRIPTOR.services_by_name["Generator"].full_name]

    serve("generator", cfg, register)


if __name__ == "__main__":
    main()
