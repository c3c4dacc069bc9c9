"""MaxSim rerank with view vectors stored at ingest against embedding them at query time, and what storing them
costs at ingest.

The corpus (examples/, or the first --scifact-docs SciFact abstracts) goes through the real chunker and indexer
classes into an embedded index in a scratch folder, built from the mesh's configuration (its embedding model):
ingest is timed with and without the view vectors (the embedding of the views is the added cost), and the bytes
the views add are read from the index. Each question (the labelled evaluation questions, or SciFact queries)
gets its 50 first-stage candidates from the real retriever class over that index; then a freshly started
reranker process (maxsim, the default) reranks every question once, over gRPC as the gateway calls it, in two
modes, each in its own new process so that neither inherits the other's cache:
  stored      the candidates as the retriever returns them (view vectors included) and the retriever's query
              vector, as the gateway passes them on: the reranker embeds nothing;
  stored_views_only  the same without the query vector (the reranker embeds the query);
  on_the_fly  the candidates with their vectors removed and no query vector (the reranker embeds the views itself,
              caching them for the questions that follow, as a process just started does): the path before.
Prints a table, writes the figures to loadtest/out/bench.json (loadtest/figures.py) and JSON to --out.

    python -m loadtest.bench_maxsim                      # the sample corpus and its labelled questions
    python -m loadtest.bench_maxsim --scifact-docs 300   # a SciFact slice and its queries
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc
import numpy as np

from loadtest.corpus import SCIFACT, example_documents, scifact_documents, scifact_queries
from loadtest.figures import figure, record
from services.chunker.service import DocumentChunker
from services.cli.mesh import ROOT_DIR, free_port
from services.evaluation.cases import read_jsonl
from services.indexer.service import DocumentIndexer
from services.retriever.service import HybridRetriever
from shared import config, convert
from shared.config import ChunkerConfig, IndexerConfig, RerankerConfig
from shared.embedding import build_embedder, build_query_embedder
from shared.embedding.views import embed_views
from shared.index.embedded import EmbeddedIndex
from shared.model import Chunk, DocumentMeta, SearchFilters
from shared.stubs import common_pb2, reranker_pb2, reranker_pb2_grpc

TENANT = "bench"
SAMPLE_CASES = Path(ROOT_DIR) / "eval" / "cases" / "sample.jsonl"


def _chunked(chunker: DocumentChunker, docs: list[common_pb2.SourceDocument]) -> list[tuple[DocumentMeta, list[Chunk]]]:
    out = []
    for doc in docs:
        meta = convert.meta_from_pb(doc.meta)
        meta.tenant_id = TENANT
        meta, chunks = chunker.run(doc.content, meta)
        for chunk in chunks:
            chunk.meta = meta
        out.append((meta, chunks))
    return out


def ingest(indexer: DocumentIndexer, documents: list[tuple[DocumentMeta, list[Chunk]]]) -> dict:
    """Upserts every document through the indexer class the stage serves; seconds in all, chunks written."""
    started, written = time.perf_counter(), 0
    for meta, chunks in documents:
        written += indexer.upsert(meta, chunks).written
    return {"seconds": time.perf_counter() - started, "chunks": written}


def view_bytes(index: EmbeddedIndex) -> dict:
    """What the stored views take in the index: their vectors' bytes and the unit lists, per chunk."""
    row = (
        index._conn()
        .execute(
            "SELECT COUNT(*), SUM(LENGTH(view_vectors)), SUM(LENGTH(view_units)), SUM(LENGTH(embedding)), "
            "AVG(json_array_length(view_units)) FROM chunks WHERE view_vectors IS NOT NULL"
        )
        .fetchone()
    )
    count, vectors, units, embedding, views = row
    return {
        "chunks": count,
        "bytes_per_chunk": (vectors + units) / count,
        "embedding_bytes_per_chunk": embedding / count,
        "views_per_chunk": views,
    }


def index_reads(index: EmbeddedIndex, embedder, questions: list[str], k: int) -> dict:
    """The retriever's two index reads (BM25 and k-NN, top k each; the query embedded beforehand) per question:
    what reading the stored views with each hit costs the retrieve stage."""
    vectors = embedder.embed_queries(questions)
    model_id = embedder.spec.model_id
    for question, vector in zip(questions, vectors, strict=True):  # warm: page cache, the k-NN view
        index.bm25(TENANT, question, SearchFilters(), k), index.knn(TENANT, vector, model_id, SearchFilters(), k)
    seconds = []
    for question, vector in zip(questions, vectors, strict=True):
        started = time.perf_counter()
        index.bm25(TENANT, question, SearchFilters(), k)
        index.knn(TENANT, vector, model_id, SearchFilters(), k)
        seconds.append(time.perf_counter() - started)
    return {"p50_ms": 1000 * statistics.median(seconds), "p95_ms": 1000 * float(np.percentile(seconds, 95))}


def start_reranker(env: dict[str, str]) -> tuple[subprocess.Popen, reranker_pb2_grpc.RerankerStub, grpc.Channel]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.reranker.server"],
        env={**env, "RAGMESH_RERANKER_PORT": str(port), "RAGMESH_RERANKER_METRICS_PORT": "0"},
        cwd=ROOT_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    grpc.channel_ready_future(channel).result(timeout=180)
    return proc, reranker_pb2_grpc.RerankerStub(channel), channel


def cold_process_latency(env: dict[str, str], requests: list[reranker_pb2.RerankRequest]) -> dict:
    """A new reranker process (model loaded at start, cache empty) reranks each request once."""
    proc, stub, channel = start_reranker(env)
    try:
        # One throwaway request on an unrelated chunk: the first inference's allocations, not the candidates'.
        warm = common_pb2.ScoredChunk(
            chunk=common_pb2.Chunk(chunk_id="warm-up", body="Warm-up sentence.", meta=common_pb2.DocumentMeta())
        )
        stub.Rerank(reranker_pb2.RerankRequest(query="warm up", candidates=[warm], top_n=1), timeout=120)
        seconds, answers = [], []
        for request in requests:
            started = time.perf_counter()
            answers.append(stub.Rerank(request, timeout=300))
            seconds.append(time.perf_counter() - started)
    finally:
        channel.close()
        proc.terminate()
        proc.wait(30)
    return {
        "p50_ms": 1000 * statistics.median(seconds),
        "p95_ms": 1000 * float(np.percentile(seconds, 95)),
        "max_ms": 1000 * max(seconds),
        "requests": len(seconds),
        "answers": answers,
    }


def near_tie(candidates, rescored: set[str], tolerance: float = 1e-3) -> bool:
    """Two rescored candidates whose rerank scores lie within `tolerance`: float16 noise may swap them."""
    scores = np.sort([c.scores.rerank_score for c in candidates if c.chunk.chunk_id in rescored])
    return bool(len(scores) > 1 and np.min(np.diff(scores)) < tolerance)


def agreement(a: list, b: list, heads: list[set[str]]) -> dict:
    """How far the two modes' answers differ: same order (and, where not, whether a near tie explains it),
    largest score and unit-similarity difference."""
    differ = [
        (x, head)
        for x, y, head in zip(a, b, heads, strict=True)
        if [c.chunk.chunk_id for c in x.candidates] != [c.chunk.chunk_id for c in y.candidates]
    ]
    score_diff = unit_diff = 0.0
    for x, y in zip(a, b, strict=True):
        theirs = {c.chunk.chunk_id: c.scores for c in y.candidates}
        for c in x.candidates:
            other = theirs[c.chunk.chunk_id]
            score_diff = max(score_diff, abs(c.scores.rerank_score - other.rerank_score))
            if len(c.scores.unit_similarity) and len(c.scores.unit_similarity) == len(other.unit_similarity):
                mine, yours = np.array(c.scores.unit_similarity), np.array(other.unit_similarity)
                both = np.isfinite(mine) & np.isfinite(yours)
                if both.any():
                    unit_diff = max(unit_diff, float(np.max(np.abs(mine[both] - yours[both]))))
    return {
        "same_order": len(a) - len(differ),
        "differ_without_near_tie": sum(1 for x, head in differ if not near_tie(x.candidates, head)),
        "requests": len(a),
        "max_score_diff": score_diff,
        "max_unit_diff": unit_diff,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="bench_maxsim")
    parser.add_argument("--scifact-docs", type=int, default=0, help="a SciFact slice instead of examples/")
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--out", default="eval/out/bench-maxsim.json")
    args = parser.parse_args(argv)
    env = {**os.environ, "RAGMESH_RERANKER_MODEL": "maxsim"}
    corpus = f"scifact[:{args.scifact_docs}]" if args.scifact_docs else "sample"
    if args.scifact_docs:
        queries = scifact_queries(SCIFACT, args.questions)
        docs = scifact_documents(SCIFACT, queries, args.scifact_docs)
        questions = [text for _, text, _ in queries]
    else:
        docs = example_documents()
        questions = [case["question"] for case in read_jsonl(SAMPLE_CASES)][: args.questions]

    chunker_cfg = config.load(ChunkerConfig, "chunker", env)
    chunker = DocumentChunker(chunker_cfg.embed_model, chunker_cfg.max_tokens, chunker_cfg.overlap_ratio)
    chunker.warm_up()
    documents = _chunked(chunker, docs)
    indexer_cfg = config.load(IndexerConfig, "indexer", env)
    embedder = build_embedder(indexer_cfg.embed_model, threads=indexer_cfg.embed_threads)
    embedder.warm_up()

    # The embedding work each adds, timed back to back on the same chunks (ingest totals below vary with load).
    every_chunk = [c for _, chunks in documents for c in chunks]
    started = time.perf_counter()
    embedder.embed_passages([c.embed_text for c in every_chunk])
    chunk_vector_s = (time.perf_counter() - started) / len(every_chunk)
    started = time.perf_counter()
    embed_views(embedder, every_chunk)
    views_s = (time.perf_counter() - started) / len(every_chunk)

    with tempfile.TemporaryDirectory(prefix="bench-maxsim-") as scratch:
        # Ingest without views first (what ingest cost before), then into a fresh index with them.
        bare = EmbeddedIndex(os.path.join(scratch, "bare.sqlite"))
        bare.warm_up()
        without = ingest(DocumentIndexer(bare, embedder, store_views=False), documents)
        index = EmbeddedIndex(os.path.join(scratch, "index.sqlite"))
        index.warm_up()
        with_views = ingest(DocumentIndexer(index, embedder), documents)
        sizes = view_bytes(index)

        retriever_cfg = config.load(config.RetrieverConfig, "retriever", env)
        # Questions embedded as the mesh's retriever does (RAGMESH_EMBED_QUERY_VARIANT): the reranker uses it.
        query_embedder = build_query_embedder(
            retriever_cfg.embed_model, retriever_cfg.embed_query_variant, threads=retriever_cfg.embed_threads
        )
        query_embedder.warm_up()
        retriever = HybridRetriever(
            index,
            query_embedder,
            rrf_k=retriever_cfg.rrf_k,
            per_retriever_k=retriever_cfg.per_retriever_k,
            default_top_k=args.candidates,
        )
        stored_requests, views_requests, bare_requests = [], [], []
        for question in questions:
            candidates, vector = retriever.search(TENANT, question, SearchFilters(), "hybrid", args.candidates)
            pbs = [convert.scored_to_pb(c) for c in candidates]
            assert vector is not None  # hybrid mode embeds the query
            query = convert.query_embedding_to_pb(retriever.query_encoder, vector)
            stored_requests.append(
                reranker_pb2.RerankRequest(query=question, candidates=pbs, top_n=len(pbs), query_embedding=query)
            )
            views_requests.append(reranker_pb2.RerankRequest(query=question, candidates=pbs, top_n=len(pbs)))
            stripped = [common_pb2.ScoredChunk(chunk=c.chunk, scores=c.scores) for c in pbs]
            for c in stripped:
                c.chunk.ClearField("views")
            bare_requests.append(reranker_pb2.RerankRequest(query=question, candidates=stripped, top_n=len(pbs)))
        reads = {
            "with_views": index_reads(index, embedder, questions, retriever_cfg.per_retriever_k),
            "without_views": index_reads(bare, embedder, questions, retriever_cfg.per_retriever_k),
        }
    payload = statistics.mean(r.ByteSize() for r in stored_requests) / 1024
    payload_bare = statistics.mean(r.ByteSize() for r in bare_requests) / 1024

    results = {
        "stored": cold_process_latency(env, stored_requests),
        "stored_views_only": cold_process_latency(env, views_requests),
        "on_the_fly": cold_process_latency(env, bare_requests),
    }
    rescore_k = config.load(RerankerConfig, "reranker", env).rescore_k
    heads = [{c.chunk.chunk_id for c in r.candidates[:rescore_k]} for r in stored_requests]
    results["stored_views_only"].pop("answers")
    same = agreement(results["stored"].pop("answers"), results["on_the_fly"].pop("answers"), heads)
    chunks = with_views["chunks"]
    ingest_cost = {
        "chunks": chunks,
        "ingest_s_per_chunk_without_views": without["seconds"] / chunks,
        "ingest_s_per_chunk_with_views": with_views["seconds"] / chunks,
        "view_s_per_chunk": (with_views["seconds"] - without["seconds"]) / chunks,
        "view_embedding_s_per_chunk": views_s,
        "chunk_embedding_s_per_chunk": chunk_vector_s,
        **sizes,
    }
    load = os.getloadavg()
    print(
        f"maxsim rerank, {corpus} corpus ({chunks} chunks), {len(questions)} questions x {args.candidates} candidates "
        f"(head of {rescore_k} rescored), a new reranker process per mode; load average {load[0]:.1f} {load[1]:.1f}"
    )
    print(f"{'mode':<19}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'request KiB':>13}")
    for name, r in results.items():
        kib = payload_bare if name == "on_the_fly" else payload
        print(f"{name:<19}{r['p50_ms']:>10.1f}{r['p95_ms']:>10.1f}{r['max_ms']:>10.1f}{kib:>13.1f}")
    print(
        f"same order in {same['same_order']}/{same['requests']} questions ({same['differ_without_near_tie']} differ "
        "without two rerank scores within 1e-3); largest difference: rerank score "
        f"{same['max_score_diff']:.2e}, unit similarity {same['max_unit_diff']:.2e}"
    )
    print(
        "index reads (BM25 + k-NN, top {k} each) per question: with views p50 {a[p50_ms]:.2f} / "
        "p95 {a[p95_ms]:.2f} ms, without p50 {b[p50_ms]:.2f} / p95 {b[p95_ms]:.2f} ms".format(
            k=config.load(config.RetrieverConfig, "retriever", env).per_retriever_k,
            a=reads["with_views"],
            b=reads["without_views"],
        )
    )
    print(
        f"ingest: {ingest_cost['ingest_s_per_chunk_without_views'] * 1000:.1f} ms/chunk without views, "
        f"{ingest_cost['ingest_s_per_chunk_with_views'] * 1000:.1f} ms/chunk with them "
        f"(+{ingest_cost['view_s_per_chunk'] * 1000:.1f} ms/chunk for {ingest_cost['views_per_chunk']:.1f} views); "
        f"embedding alone, back to back: views {views_s * 1000:.1f} ms/chunk, the chunk's own vector "
        f"{chunk_vector_s * 1000:.1f} ms/chunk; "
        f"{ingest_cost['bytes_per_chunk']:.0f} bytes/chunk of views "
        f"(the chunk's own vector: {ingest_cost['embedding_bytes_per_chunk']:.0f})"
    )
    bench_config = {
        "bench": "rerank-maxsim",
        "corpus": corpus,
        "candidates": args.candidates,
        "rescore_k": rescore_k,
        "model": embedder.spec.model_id,
        "questions": len(questions),
    }
    figures = [
        figure(f"rerank.maxsim.{stat}", r[key], "ms", **bench_config, path=name, process="cold")
        for name, r in results.items()
        for stat, key in (("p50", "p50_ms"), ("p95", "p95_ms"))
    ]
    figures += [
        figure("ingest.views.s_per_chunk", ingest_cost["view_s_per_chunk"], "s", **bench_config),
        figure("ingest.views.embedding_s_per_chunk", views_s, "s", **bench_config),
        figure("ingest.chunk_vector.embedding_s_per_chunk", chunk_vector_s, "s", **bench_config),
        figure("ingest.s_per_chunk", ingest_cost["ingest_s_per_chunk_with_views"], "s", **bench_config, views=True),
        figure("ingest.s_per_chunk", ingest_cost["ingest_s_per_chunk_without_views"], "s", **bench_config, views=False),
        figure("ingest.views.bytes_per_chunk", ingest_cost["bytes_per_chunk"], "bytes", **bench_config),
        figure("rerank.maxsim.stored_vs_on_the_fly.max_score_diff", same["max_score_diff"], "", **bench_config),
    ]
    figures += [
        figure(f"retrieve.index_reads.{stat}", r[key], "ms", **bench_config, views=name == "with_views")
        for name, r in reads.items()
        for stat, key in (("p50", "p50_ms"), ("p95", "p95_ms"))
    ]
    print("figures: " + str(record(figures)))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        json.dumps(
            {"corpus": corpus, **results, "agreement": same, "ingest": ingest_cost, "index_reads": reads}, indent=2
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
