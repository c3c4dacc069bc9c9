"""The API as a client without the Python stubs sees it: grpcurl (a real Go gRPC client, built into .tools/ by
`make tools`) describes the gateway through server reflection and calls Ask with the shipped descriptor set."""

import json
import os
import subprocess

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2

from tests.support.mesh import ROOT, TENANT

pytestmark = pytest.mark.integration
GRPCURL = os.path.join(ROOT, ".tools", "grpcurl")
PROTOSET = os.path.join(ROOT, "protos", "ragmesh.protoset")


def grpcurl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([GRPCURL, "-plaintext", "-max-time", "60", *args], capture_output=True, text=True, timeout=90)


def test_reflection_describes_the_gateway_without_the_proto_files(mesh):
    listed = grpcurl(mesh.address("gateway"), "list")
    assert listed.returncode == 0, listed.stderr
    assert "ragmesh.v1.Gateway" in listed.stdout.split()
    described = grpcurl(mesh.address("gateway"), "describe", "ragmesh.v1.Gateway.Ask")
    assert described.returncode == 0, described.stderr
    assert "rpc Ask ( .ragmesh.v1.AskRequest ) returns ( .ragmesh.v1.AskResponse )" in described.stdout
    message = grpcurl(mesh.address("gateway"), "describe", "ragmesh.v1.AskRequest")
    assert "string question = 2;" in message.stdout, message.stderr


def test_ask_through_the_descriptor_set_with_a_key_and_refused_without_one(mesh, ingested):
    request = json.dumps({"tenant_id": TENANT, "question": "whats E-4412"})
    key = mesh.key_for(TENANT)
    answered = grpcurl(
        "-protoset",
        PROTOSET,
        "-H",
        f"authorization: Bearer {key}",
        "-d",
        request,
        mesh.address("gateway"),
        "ragmesh.v1.Gateway/Ask",
    )
    assert answered.returncode == 0, answered.stderr
    reply = json.loads(answered.stdout)
    assert reply["answer"]["citations"][0]["documentId"] == "manuals/error-codes"
    refused = grpcurl("-protoset", PROTOSET, "-d", request, mesh.address("gateway"), "ragmesh.v1.Gateway/Ask")
    assert refused.returncode != 0 and "Unauthenticated" in refused.stderr


def test_reflection_is_served_as_v1_and_v1alpha(mesh):
    """grpcurl and ghz ask for grpc.reflection.v1 first; both names answer with the same descriptors."""
    for service in ("grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"):
        with grpc.insecure_channel(mesh.address("gateway")) as channel:
            info = channel.stream_stream(
                f"/{service}/ServerReflectionInfo",
                request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
            )
            (reply,) = list(info(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10))
        names = {entry.name for entry in reply.list_services_response.service}
        assert {"ragmesh.v1.Gateway", "grpc.reflection.v1.ServerReflection"} <= names, service
