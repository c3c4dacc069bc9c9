"""Generators that invent a citation id, or misquote a real chunk at its real span: the real gateway must
never return either as an answer.

The rogue generator below is the adversary under test, not a stand-in for a component being
verified; the gateway is a real process wired to the session's real retriever and reranker.
"""

from concurrent import futures

import grpc
import pytest

from services.cli.mesh import free_port
from shared.stubs import common_pb2, gateway_pb2, generator_pb2, generator_pb2_grpc
from shared.text import answer_units
from tests.support.mesh import TENANT, extra_stages

pytestmark = pytest.mark.integration


class FabricatingGenerator(generator_pb2_grpc.GeneratorServicer):
    def Generate(self, request, context):
        real = request.passages[0].chunk.chunk_id
        return generator_pb2.GenerateResponse(
            answer=common_pb2.Answer(
                text="The Team plan costs $12 [1][2].",
                generator_id="rogue",
                reason="answered",
                citations=[common_pb2.Citation(chunk_id=real), common_pb2.Citation(chunk_id="ch_fabricated0000")],
            )
        )


class MisquotingGenerator(generator_pb2_grpc.GeneratorServicer):
    """Cites a real chunk at a real span, with words the source does not have there."""

    def Generate(self, request, context):
        chunk = request.passages[0].chunk
        end = chunk.char_start + min(len(chunk.body), 20)
        return generator_pb2.GenerateResponse(
            answer=common_pb2.Answer(
                text="The Team plan is free [1].",
                generator_id="rogue",
                reason="answered",
                citations=[
                    common_pb2.Citation(
                        chunk_id=chunk.chunk_id,
                        char_start=chunk.char_start,
                        char_end=end,
                        quote="The Team plan is free"[: end - chunk.char_start],
                        document_id=chunk.meta.document_id,
                        version=chunk.meta.version,
                    )
                ],
            )
        )


class HalfUnitGenerator(generator_pb2_grpc.GeneratorServicer):
    """Quotes the source exactly at its real place, but only the first words of a sentence: a span that is
    not one of the answer units it was given (a half sentence can say the opposite of the whole)."""

    def Generate(self, request, context):
        chunk = request.passages[0].chunk
        start, end = answer_units(chunk.body)[-1]
        end = start + max(1, (end - start) // 2)
        return generator_pb2.GenerateResponse(
            answer=common_pb2.Answer(
                text="Half of it [1].",
                generator_id="rogue",
                reason="answered",
                citations=[
                    common_pb2.Citation(
                        chunk_id=chunk.chunk_id,
                        char_start=chunk.char_start + start,
                        char_end=chunk.char_start + end,
                        quote=chunk.body[start:end],
                        document_id=chunk.meta.document_id,
                        version=chunk.meta.version,
                    )
                ],
            )
        )


def rogue_gateway(mesh, tmp_path, servicer):
    rogue = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    generator_pb2_grpc.add_GeneratorServicer_to_server(servicer, rogue)
    rogue_port = rogue.add_insecure_port("127.0.0.1:0")
    rogue.start()
    port = free_port()
    env = mesh.env()
    env.update(
        {
            "RAGMESH_GATEWAY_PORT": str(port),
            "RAGMESH_GATEWAY_METRICS_PORT": "0",
            "RAGMESH_GENERATOR_ADDR": f"127.0.0.1:{rogue_port}",
            "RAGMESH_DATA_DIR": str(tmp_path),
        }
    )
    try:
        with extra_stages(["gateway"], env, port) as gateway:
            yield gateway
    finally:
        rogue.stop(0)


@pytest.fixture
def guarded_gateway(mesh, ingested, tmp_path):
    yield from rogue_gateway(mesh, tmp_path, FabricatingGenerator())


@pytest.fixture
def misquoted_gateway(mesh, ingested, tmp_path):
    yield from rogue_gateway(mesh, tmp_path, MisquotingGenerator())


@pytest.fixture
def half_unit_gateway(mesh, ingested, tmp_path):
    yield from rogue_gateway(mesh, tmp_path, HalfUnitGenerator())


def test_a_fabricated_citation_never_reaches_the_caller_as_an_answer(guarded_gateway):
    response = guarded_gateway.Ask(
        gateway_pb2.AskRequest(tenant_id=TENANT, question="how much is the Team plan per month"), timeout=60
    )
    assert response.answer.abstained
    assert response.answer.reason.startswith("citation_validation_failed")
    assert "ch_fabricated0000" in response.answer.reason
    assert not response.answer.text and not response.answer.citations
    assert response.suggested_reading


def test_a_misquoted_span_never_reaches_the_caller_as_an_answer(misquoted_gateway):
    response = misquoted_gateway.Ask(
        gateway_pb2.AskRequest(tenant_id=TENANT, question="how much is the Team plan per month"), timeout=60
    )
    assert response.answer.abstained and not response.answer.citations
    assert response.answer.reason.startswith("citation_validation_failed: quote differs from the source")


def test_a_span_that_is_not_a_supplied_unit_never_reaches_the_caller_as_an_answer(half_unit_gateway):
    response = half_unit_gateway.Ask(
        gateway_pb2.AskRequest(tenant_id=TENANT, question="how much is the Team plan per month"), timeout=60
    )
    assert response.answer.abstained and not response.answer.citations
    assert response.answer.reason.startswith("citation_validation_failed: span not a supplied unit"), (
        response.answer.reason
    )
