"""Generated protobuf/gRPC stubs (`make stubs`), re-exported under one import.

protoc derives imports from proto paths (`from ragmesh.v1 import common_pb2`), so the generated
root is put on sys.path before the modules are imported.
"""

import os
import sys

_ROOT = os.path.dirname(os.path.abspath(__file__))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

try:
    from ragmesh.v1 import (  # noqa: E402
        chunker_pb2,
        chunker_pb2_grpc,
        common_pb2,
        gateway_pb2,
        gateway_pb2_grpc,
        generator_pb2,
        generator_pb2_grpc,
        indexer_pb2,
        indexer_pb2_grpc,
        reranker_pb2,
        reranker_pb2_grpc,
        retriever_pb2,
        retriever_pb2_grpc,
    )
except ImportError as exc:  # pragma: no cover - only without `make stubs`
    raise ImportError("gRPC stubs are missing: run `make stubs` (they are generated from protos/)") from exc

__all__ = [
    "chunker_pb2",
    "chunker_pb2_grpc",
    "common_pb2",
    "gateway_pb2",
    "gateway_pb2_grpc",
    "generator_pb2",
    "generator_pb2_grpc",
    "indexer_pb2",
    "indexer_pb2_grpc",
    "reranker_pb2",
    "reranker_pb2_grpc",
    "retriever_pb2",
    "retriever_pb2_grpc",
]
