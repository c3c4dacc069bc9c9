"""Erasure at tenant scale: how long erasing (and verifying) a whole tenant, and one document of it, takes on
the embedded index, and how large the indexer's reply to the gateway is (it carries every erased chunk id).

Writes bench_retrieval's synthetic corpus (documents of CHUNKS_PER_DOC chunks, 40-90 words each from a Zipf
vocabulary, 384-dimension vectors) into a fresh SQLite index, erases one document, then the whole tenant, and
prints the figures (also merged into loadtest/out/bench.json).

    python -m loadtest.bench_erasure [--chunks 200000]
"""

import argparse
import tempfile
import time

from loadtest.bench_retrieval import CHUNKS_PER_DOC, TENANT, Corpus
from loadtest.figures import figure, record
from ragmesh.v1 import indexer_pb2
from shared.index.embedded import EmbeddedIndex
from shared.index.erasure import erase

MODEL_ID = "bench/model"
DIM = 384
GRPC_LIMIT = 64 * 1024 * 1024  # shared/clients.py, shared/server.py


def _reply_bytes(result) -> int:
    return indexer_pb2.IndexerEraseResponse(
        document_ids=result.document_ids, chunk_ids=result.chunk_ids, probes=result.probes
    ).ByteSize()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=200_000)
    args = parser.parse_args()
    corpus = Corpus(args.chunks, DIM, seed=0, uniform=True)
    with tempfile.TemporaryDirectory(prefix="ragmesh-bench-erasure-") as folder:
        index = EmbeddedIndex(f"{folder}/index.sqlite")
        index.warm_up()
        started = time.perf_counter()
        documents = 0
        for meta, chunks, vectors in corpus.documents():
            index.replace_document_version(meta, chunks, vectors, MODEL_ID)
            documents += 1
        written = time.perf_counter() - started
        started = time.perf_counter()
        one = erase(index, TENANT, "doc-000001")
        one_s = time.perf_counter() - started
        started = time.perf_counter()
        tenant = erase(index, TENANT, None)
        tenant_s = time.perf_counter() - started
    verified = all(c.after == 0 and c.probes_found == 0 and c.ids_found == 0 for c in tenant.checks + one.checks)
    reply = _reply_bytes(tenant)
    ids, probes = len(tenant.chunk_ids), len(tenant.probes)
    print(f"| tenant of {documents:,} documents ({args.chunks:,} chunks, {CHUNKS_PER_DOC} each) | figure |")
    print("| --- | --- |")
    print(f"| write | {written:.1f} s |")
    print(f"| erase one document, verified | {one_s:.2f} s ({len(one.probes)} probes) |")
    print(f"| erase the tenant, verified | {tenant_s:.1f} s ({ids:,} chunk ids, {probes} probes) |")
    print(f"| verification clean | {verified} |")
    print(
        f"| indexer reply to the gateway | {reply / 1e6:.1f} MB ({100 * reply / GRPC_LIMIT:.0f}% of the 64 MiB limit) |"
    )
    config = {"documents": documents, "chunks": args.chunks, "backend": "embedded"}
    figures = [
        figure("erasure_document_s", one_s, "s", **config),
        figure("erasure_tenant_s", tenant_s, "s", **config),
        figure("erasure_tenant_reply_bytes", reply, "bytes", **config),
    ]
    print(f"figures: {record(figures)}")


if __name__ == "__main__":
    main()
