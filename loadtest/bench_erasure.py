"""Erasure at tenant scale: how long erasing (and verifying) a whole tenant, and one document of it, takes on
the embedded index, and how large the indexer's reply to the gateway is (it carries every erased chunk id).

Writes a tenant of N synthetic documents (two chunks each, 384-dimension vectors, distinct words so that
probes exist) into a fresh SQLite index, erases one document, then the whole tenant, and prints the figures
(also merged into loadtest/out/bench.json).

    python -m loadtest.bench_erasure [--documents 100000]
"""

import argparse
import tempfile
import time

import numpy as np

from loadtest.figures import figure, record
from ragmesh.v1 import indexer_pb2
from shared.index.embedded import EmbeddedIndex
from shared.index.erasure import erase
from shared.model import Chunk, DocumentMeta

TENANT = "bench"
MODEL_ID = "bench/model"
DIM = 384
GRPC_LIMIT = 64 * 1024 * 1024  # shared/clients.py, shared/server.py


def _document(n: int, rng: np.random.Generator) -> tuple[DocumentMeta, list[Chunk], dict[str, np.ndarray]]:
    doc = f"records/customer-{n:07d}.md"
    meta = DocumentMeta(
        tenant_id=TENANT,
        document_id=doc,
        version="1",
        access_scopes=["public"],
        source_uri=doc,
        content_type="text/markdown",
        title=f"Customer {n}",
    )
    chunks, vectors = [], {}
    for position, body in enumerate(
        (
            f"Customer R{n:07d} of Kestrel Avenue {n % 997} signed order Q{n * 7:08d} for Harbourview.",
            f"Invoice V{n * 3:08d} for account R{n:07d} was settled by transfer on day {n % 365}.",
        )
    ):
        chunk = Chunk(
            chunk_id=f"ch_{n:012x}{position:012x}",
            meta=meta,
            heading_path=[meta.title],
            body=body,
            embed_text=f"{meta.title}\n{body}",
            char_start=0,
            char_end=len(body),
            parent_section_id=f"sec-{n}",
            token_count=24,
            position=position,
            section_text=body,
        )
        vector = rng.standard_normal(DIM).astype(np.float32)
        chunks.append(chunk)
        vectors[chunk.chunk_id] = vector / np.linalg.norm(vector)
    return meta, chunks, vectors


def _reply_bytes(result) -> int:
    return indexer_pb2.IndexerEraseResponse(
        document_ids=result.document_ids, chunk_ids=result.chunk_ids, probes=result.probes
    ).ByteSize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=100_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="ragmesh-bench-erasure-") as folder:
        index = EmbeddedIndex(f"{folder}/index.sqlite")
        index.warm_up()
        started = time.perf_counter()
        for n in range(args.documents):
            meta, chunks, vectors = _document(n, rng)
            index.replace_document_version(meta, chunks, vectors, MODEL_ID)
        written = time.perf_counter() - started
        started = time.perf_counter()
        one = erase(index, TENANT, "records/customer-0000001.md")
        one_s = time.perf_counter() - started
        started = time.perf_counter()
        tenant = erase(index, TENANT, None)
        tenant_s = time.perf_counter() - started
    verified = all(c.after == 0 and c.probes_found == 0 and c.ids_found == 0 for c in tenant.checks + one.checks)
    reply = _reply_bytes(tenant)
    print(f"| tenant of {args.documents:,} documents ({2 * args.documents:,} chunks) | figure |")
    print("| --- | --- |")
    print(f"| write | {written:.1f} s |")
    print(f"| erase one document, verified | {one_s:.2f} s ({len(one.probes)} probes) |")
    ids, probes = len(tenant.chunk_ids), len(tenant.probes)
    print(f"| erase the tenant, verified | {tenant_s:.1f} s ({ids:,} chunk ids, {probes} probes) |")
    print(f"| verification clean | {verified} |")
    print(
        f"| indexer reply to the gateway | {reply / 1e6:.1f} MB ({100 * reply / GRPC_LIMIT:.0f}% of the 64 MiB limit) |"
    )
    config = {"documents": args.documents, "chunks": 2 * args.documents, "backend": "embedded"}
    figures = [
        figure("erasure_document_s", one_s, "s", **config),
        figure("erasure_tenant_s", tenant_s, "s", **config),
        figure("erasure_tenant_reply_bytes", reply, "bytes", **config),
    ]
    print(f"figures: {record(figures)}")


if __name__ == "__main__":
    main()
