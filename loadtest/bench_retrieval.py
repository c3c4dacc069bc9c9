"""Retrieval benchmark: the embedded and OpenSearch backends on the same synthetic corpus.

For each corpus size it loads both backends, then measures BM25, k-NN and hybrid retrieval (the
retriever's own BM25 ∥ k-NN + RRF path, with precomputed query vectors so no model runs) one query
at a time for p50/p95, then with several client threads for throughput, and OpenSearch's k-NN
recall@k against exact search over the same vectors. Prints one table.

`embedded-before` is the embedded index's k-NN and BM25 as they were before the in-memory vector views
(a SQL query for the allowed row ids, then a masked copy of the tenant's matrix, per query), on the same
SQLite file, so the table shows before and after side by side; it runs fewer queries (its k-NN takes
0.5-1.2 s each at 100k chunks). `embedded-fts5` is the embedded index with BM25 ranked by FTS5 itself (bm25()
of every match, then ORDER BY ... LIMIT), as before BM25 was scored from the tenant's view (shared/index/fts_bm25.py).
OpenSearch is skipped when no node answers on --opensearch-url.
The `memory` column is the k-NN vectors and filter arrays a reader holds, per 100k chunks; `cold s`
is the first k-NN query of a fresh reader (it builds the view); `after write` is a k-NN query right
after the writer replaced one 10-chunk document (the reader applies the logged rows).

Vectors are 384-d unit vectors with a 32-d intrinsic dimension, as real sentence embeddings have
(uniform random 384-d vectors, --uniform, have no neighbourhood structure: no ANN index does well on
them and no retrieval model produces them). Text is Zipf-distributed pseudo-words.

    python -m loadtest.bench_retrieval --sizes 10000,100000
"""

import argparse
import os
import statistics
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from loadtest.figures import figure, record
from services.retriever.service import HybridRetriever
from shared import config
from shared.embedding.base import ModelSpec
from shared.index.base import SearchHit
from shared.index.embedded import (
    BINARY_FACTOR,
    BINARY_MIN,
    BINARY_MIN_ROWS,
    RESCORE_FACTOR,
    RESCORE_MIN,
    EmbeddedIndex,
    _row_to_chunk,
    fts_query,
)
from shared.index.opensearch import HnswParams, OpenSearchIndex
from shared.model import Chunk, DocumentMeta, SearchFilters
from shared.sqlite import ThreadLocalSQLite

MODEL_ID = "bench/synthetic-384"
TENANT = "bench"
CHUNKS_PER_DOC = 10
LATENT_DIM = 32
ANY = SearchFilters()


# ---- synthetic corpus ---------------------------------------------------------------------------


class Corpus:
    def __init__(self, size: int, dim: int, seed: int, uniform: bool):
        rng = np.random.default_rng(seed)
        self.rng, self.dim, self.uniform = rng, dim, uniform
        syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
        self.vocab = np.array(["".join(rng.choice(syllables, size=rng.integers(2, 4))) for _ in range(20000)])
        weights = 1.0 / np.arange(1, len(self.vocab) + 1)
        self.word_p = weights / weights.sum()
        # Real sentence embeddings have a low intrinsic dimension: points of a 32-d latent space
        # mapped into 384-d, plus a little full-rank noise.
        self.projection = rng.standard_normal((LATENT_DIM, dim)).astype(np.float32)
        self.vectors = self.sample_vectors(size)
        lengths = rng.integers(40, 90, size=size)
        words = rng.choice(self.vocab, size=int(lengths.sum()), p=self.word_p)
        cuts = np.cumsum(lengths)[:-1]
        self.texts = [" ".join(w) for w in np.split(words, cuts)]

    def sample_vectors(self, n: int) -> np.ndarray:
        if self.uniform:
            return _unit(self.rng.standard_normal((n, self.dim)).astype(np.float32))
        latent = self.rng.standard_normal((n, LATENT_DIM)).astype(np.float32)
        noise = self.rng.standard_normal((n, self.dim)).astype(np.float32)
        return _unit(latent @ self.projection + 0.1 * np.sqrt(LATENT_DIM) * noise)

    def queries(self, n: int) -> list[tuple[str, np.ndarray]]:
        mid = self.vocab[100:5000]  # neither stop-word-like nor absent
        texts = [" ".join(self.rng.choice(mid, size=self.rng.integers(2, 5))) for _ in range(n)]
        return list(zip(texts, self.sample_vectors(n), strict=True))

    def documents(self):
        """(meta, chunks, vectors) per synthetic document of CHUNKS_PER_DOC chunks."""
        for start in range(0, len(self.texts), CHUNKS_PER_DOC):
            doc = f"doc-{start // CHUNKS_PER_DOC:06d}"
            meta = DocumentMeta(
                tenant_id=TENANT,
                document_id=doc,
                version="1",
                access_scopes=["public"],
                effective_from="2024-01-01",
                source_uri=f"{doc}.md",
                content_type="text/markdown",
                title=doc,
            )
            chunks, vectors = [], {}
            for i in range(start, min(start + CHUNKS_PER_DOC, len(self.texts))):
                body = self.texts[i]
                chunk_id = f"c{i:07d}"
                chunks.append(
                    Chunk(
                        chunk_id=chunk_id,
                        meta=meta,
                        heading_path=[doc],
                        body=body,
                        embed_text=f"{doc}\n{body}",
                        char_start=0,
                        char_end=len(body),
                        parent_section_id=doc,
                        token_count=len(body.split()),
                        position=i - start,
                        section_text=body,
                    )
                )
                vectors[chunk_id] = self.vectors[i]
            yield meta, chunks, vectors


def _unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


# ---- loading ------------------------------------------------------------------------------------


def load_embedded(corpus: Corpus, path: str) -> EmbeddedIndex:
    index = EmbeddedIndex(path)
    index.warm_up()
    for meta, chunks, vectors in corpus.documents():
        index.replace_document_version(meta, chunks, vectors, MODEL_ID)
    return index


def cached_index_path(directory: str, size: int, args: argparse.Namespace) -> str:
    """Where --index-dir keeps the embedded file of one corpus (size, dimension, seed, vector kind)."""
    kind = "uniform" if args.uniform else "lowrank"
    return os.path.join(directory, f"bench-{size}-{args.dim}d-seed{args.seed}-{kind}.sqlite")


def load_embedded_cached(corpus: Corpus, path: str) -> float | None:
    """Loads the corpus into `path` unless a finished load is there already (a `.done` file next to it,
    written after the last document, holding the seconds the load took). Returns the seconds of the load
    that made the file (None if the marker does not say). A later run re-applies the same few
    replacements (cold_and_after_write), so a reused file answers the same queries."""
    done = path + ".done"
    if os.path.exists(done):
        with open(done) as marker:
            words = marker.read().split()
        return float(words[0]) if words and words[-1] == "s" else None
    for stale in (path, path + "-wal", path + "-shm"):
        if os.path.exists(stale):
            os.remove(stale)
    t0 = time.perf_counter()
    load_embedded(corpus, path)
    seconds = time.perf_counter() - t0
    with open(done, "w") as marker:
        marker.write(f"{seconds:.1f} s\n")
    return seconds


def opensearch_index_name(size: int, args: argparse.Namespace, hnsw: HnswParams) -> str:
    """One name per corpus (size, dimension, seed, vector kind) and graph build, so a kept index is only ever
    reused for the same corpus and HNSW settings."""
    kind = "uniform" if args.uniform else "lowrank"
    return f"ragmesh-bench-{size}-{args.dim}d-seed{args.seed}-{kind}-m{hnsw.m}-efc{hnsw.ef_construction}"


def load_opensearch(
    corpus: Corpus, url: str, name: str, hnsw: HnswParams, reuse: bool = False
) -> tuple[OpenSearchIndex, float | None]:
    """The index and the seconds its load took. With `reuse`, an index a kept run finished loading (its mapping's
    _meta says how many chunks and how long, written after the final refresh) is used as it is: at 1M chunks
    the load takes most of an hour here."""
    index = OpenSearchIndex(url, name, dimension=corpus.dim, hnsw=hnsw, refresh=False)
    size = len(corpus.texts)
    if reuse and index.client.indices.exists(index=name):
        loaded = index.client.indices.get_mapping(index=name)[name]["mappings"].get("_meta", {})
        if loaded.get("loaded_chunks") == size and index.count_chunks() == size:  # ef_search is per query
            return index, loaded.get("load_seconds")
    started = time.perf_counter()
    index.drop()
    index.warm_up()
    # No refreshes while loading: fewer, larger segments, and one HNSW graph build per segment.
    index.client.indices.put_settings(index=name, body={"index": {"refresh_interval": "-1"}})
    index.bulk_add(corpus.documents(), MODEL_ID)
    index.client.indices.put_settings(index=name, body={"index": {"refresh_interval": "1s"}})
    index.refresh()
    seconds = time.perf_counter() - started
    index.client.indices.put_mapping(index=name, body={"_meta": {"loaded_chunks": size, "load_seconds": seconds}})
    return index, seconds


class EmbeddedBefore(EmbeddedIndex):
    """The embedded retrieval before the vector views (commit 9d38bfe), on the same file: k-NN with the
    tenant's whole matrix cached per generation, the allowed row ids fetched by SQL and the matrix
    copied under a mask per query; BM25 sorting every match with its whole row."""

    def __init__(self, path: str):
        super().__init__(path)
        self._db = ThreadLocalSQLite(path)  # without the mmap and page-cache pragmas
        self._before_cache: dict = {}

    def knn(self, tenant_id, vector, model_id, filters, top_k):
        stored_models = self._model_ids(tenant_id)
        assert stored_models in ([], [model_id])
        conn = self._conn()
        generation = int(conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])
        cached = self._before_cache.get(tenant_id)
        if not cached or cached[0] != generation:
            rows = conn.execute("SELECT rowid, embedding FROM chunks WHERE tenant_id=?", (tenant_id,)).fetchall()
            cached = (
                generation,
                np.array([r[0] for r in rows], dtype=np.int64),
                np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows]),
            )
            self._before_cache[tenant_id] = cached
        _, rowids, matrix = cached
        where, params = self._filter_sql(tenant_id, filters)  # unchanged since
        allowed = np.array(
            [r[0] for r in conn.execute(f"SELECT c.rowid FROM chunks c WHERE {where}", params)], dtype=np.int64
        )
        mask = np.isin(rowids, allowed)
        candidate_rows = rowids[mask]
        scores = matrix[mask] @ np.asarray(vector, dtype=np.float32)
        k = min(top_k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        chosen = [int(candidate_rows[i]) for i in top]
        by_rowid = {
            r["rowid"]: r
            for r in conn.execute(f"SELECT c.* FROM chunks c WHERE c.rowid IN ({','.join('?' * len(chosen))})", chosen)
        }
        return [
            SearchHit(chunk=_row_to_chunk(by_rowid[r]), score=float(scores[i]))
            for r, i in zip(chosen, top, strict=True)
        ]

    def bm25(self, tenant_id, query, filters, top_k):
        """The BM25 query as it was: every match joined with its whole row (embedding included) and sorted."""
        expression = fts_query(query)
        if not expression:
            return []
        where, params = self._filter_sql(tenant_id, filters)
        rows = (
            self._conn()
            .execute(
                f"SELECT c.*, bm25(chunks_fts) AS score FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
                f"WHERE chunks_fts MATCH ? AND {where} ORDER BY score LIMIT ?",
                [expression, *params, top_k],
            )
            .fetchall()
        )
        return [SearchHit(chunk=_row_to_chunk(r), score=-float(r["score"])) for r in rows]

    def vector_memory_bytes(self) -> int:
        return sum(c[1].nbytes + c[2].nbytes for c in self._before_cache.values())


class EmbeddedFts5(EmbeddedIndex):
    """The embedded index with BM25 ranked by FTS5 itself (bm25() of every match, ORDER BY ... LIMIT), as it
    was before BM25 was scored from the tenant's view; k-NN as now."""

    def bm25(self, tenant_id, query, filters, top_k):
        return self.bm25_fts5(tenant_id, query, filters, top_k)


def opensearch_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


# ---- measuring ----------------------------------------------------------------------------------


class PrecomputedEmbedder:
    """Hands the retriever the query's synthetic vector: the benchmark measures the index, not a model."""

    spec = ModelSpec(model_id=MODEL_ID, dimension=384, max_tokens=256)

    def __init__(self, queries):
        self.by_text = dict(queries)

    def warm_up(self) -> None: ...

    def embed_queries(self, texts):
        return np.stack([self.by_text[t] for t in texts])


def operations(index, queries, k: int) -> dict:
    retriever = HybridRetriever(index, PrecomputedEmbedder(queries), per_retriever_k=k, default_top_k=k)
    return {
        "bm25": lambda q: index.bm25(TENANT, q[0], ANY, k),
        "knn": lambda q: index.knn(TENANT, q[1], MODEL_ID, ANY, k),
        "hybrid": lambda q: retriever.run(TENANT, q[0], ANY, mode="hybrid", top_k=k),
    }


def latency_ms(op, queries, budget_s: float, at_least: int = 20, warm: int = 5) -> tuple[float, float, int]:
    """One query at a time: p50, p95 and how many ran (at most budget_s seconds, at least `at_least`)."""
    for q in queries[:warm]:  # warm caches and connections
        op(q)
    times, deadline = [], time.perf_counter() + budget_s
    for q in queries:
        t0 = time.perf_counter()
        op(q)
        times.append((time.perf_counter() - t0) * 1000)
        if len(times) >= at_least and t0 > deadline:
            break
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))], len(times)


def throughput_qps(op, queries, threads: int) -> float:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(op, queries))
    return len(queries) / (time.perf_counter() - t0)


def cold_and_after_write(path: str, corpus: Corpus, queries, k: int) -> tuple[float, float]:
    """Seconds of a fresh reader's first k-NN query, and ms (median of 5) of a k-NN query right
    after the writer (another connection) replaced one document."""
    reader = EmbeddedIndex(path)
    t0 = time.perf_counter()
    reader.knn(TENANT, queries[0][1], MODEL_ID, ANY, k)
    cold_s = time.perf_counter() - t0
    writer = EmbeddedIndex(path)
    documents = corpus.documents()
    times = []
    for q in queries[1:6]:
        meta, chunks, vectors = next(documents)
        for c in chunks:
            c.embed_text += " rewritten"
            c.chunk_id += "r"
        writer.replace_document_version(
            meta, chunks, {c.chunk_id: v for c, v in zip(chunks, vectors.values(), strict=True)}, MODEL_ID
        )
        t0 = time.perf_counter()
        reader.knn(TENANT, q[1], MODEL_ID, ANY, k)
        times.append((time.perf_counter() - t0) * 1000)
    return cold_s, statistics.median(times)


def recall_at_k(index, corpus: Corpus, queries, k: int) -> float:
    recalls = []
    for _, vector in queries:
        exact = np.argpartition(-(corpus.vectors @ vector), k)[:k]
        truth = {f"c{i:07d}" for i in exact}
        # (rstrip: cold_and_after_write re-files a few documents under ids ending in "r")
        found = {h.chunk.chunk_id.rstrip("r") for h in index.knn(TENANT, vector, MODEL_ID, ANY, k)}
        recalls.append(len(truth & found) / k)
    return float(np.mean(recalls))


# ---- main ---------------------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000", help="corpus sizes in chunks, comma-separated")
    ap.add_argument("--backends", default="embedded,embedded-fts5,embedded-before,opensearch")
    ap.add_argument("--queries", type=int, default=200, help="queries per measurement (and for recall)")
    ap.add_argument("--budget", type=float, default=15.0, help="seconds per latency measurement, at most")
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--threads", type=int, default=4, help="client threads for the throughput run")
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--uniform", action="store_true", help="uniform random vectors (HNSW's worst case)")
    ap.add_argument("--opensearch-url", default=os.environ.get("OPENSEARCH_URL", "http://127.0.0.1:9200"))
    ap.add_argument("--m", type=int, default=HnswParams.m)
    ap.add_argument("--ef-construction", type=int, default=HnswParams.ef_construction)
    ap.add_argument("--ef-search", type=int, default=HnswParams.ef_search)
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep the OpenSearch bench indexes, and reuse one a kept run loaded (same corpus and HNSW build)",
    )
    ap.add_argument(
        "--index-dir",
        default="",
        help="keep each size's embedded SQLite file here and reuse it on later runs (loading 1M chunks takes long); "
        "delete the files after changing the index schema",
    )
    args = ap.parse_args()
    hnsw = HnswParams(m=args.m, ef_construction=args.ef_construction, ef_search=args.ef_search)
    backends = args.backends.split(",")
    if "opensearch" in backends and not opensearch_answers(args.opensearch_url):
        print(f"no OpenSearch node answers on {args.opensearch_url}: skipping it (make opensearch-up starts one)")
        backends.remove("opensearch")
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        t0 = time.perf_counter()
        corpus = Corpus(size, args.dim, args.seed, args.uniform)
        queries = corpus.queries(args.queries)
        print(f"[{size}] corpus generated in {time.perf_counter() - t0:.1f}s", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            path = (
                cached_index_path(args.index_dir, size, args) if args.index_dir else os.path.join(tmp, "index.sqlite")
            )
            loaded, loaded_s = False, None
            for backend in backends:
                t0 = time.perf_counter()
                if backend in ("embedded", "embedded-fts5", "embedded-before"):
                    if not loaded:
                        if args.index_dir:  # the seconds of the load that made the file (None: not recorded)
                            os.makedirs(args.index_dir, exist_ok=True)
                            loaded_s = load_embedded_cached(corpus, path)
                            print(f"[{size}] {path}", flush=True)
                        else:
                            load_embedded(corpus, path)
                            loaded_s = time.perf_counter() - t0
                        loaded = True
                    index = {"embedded": EmbeddedIndex, "embedded-fts5": EmbeddedFts5}.get(backend, EmbeddedBefore)(
                        path
                    )
                    load_s = loaded_s
                else:
                    index, load_s = load_opensearch(
                        corpus, args.opensearch_url, opensearch_index_name(size, args, hnsw), hnsw, reuse=args.keep
                    )
                print(f"[{size}] {backend}: loaded in {'?' if load_s is None else f'{load_s:.1f}'}s", flush=True)
                before = backend == "embedded-before"
                extra = {}
                if backend == "embedded":
                    extra["cold_s"], extra["after_write_ms"] = cold_and_after_write(path, corpus, queries, args.k)
                recall = recall_at_k(index, corpus, queries[: 10 if before else None], args.k)
                for name, op in operations(index, queries, args.k).items():
                    p50, p95, n = latency_ms(
                        op,
                        queries,
                        args.budget / 3 if before else args.budget,
                        at_least=10 if before else 20,
                        warm=1 if before else 5,
                    )
                    qps = None if before else throughput_qps(op, queries[:n], args.threads)
                    memory = getattr(index, "vector_memory_bytes", None)
                    per_100k = memory() * 100_000 / size if memory and name == "knn" else None
                    rows.append(
                        (
                            size,
                            backend,
                            name,
                            n,
                            p50,
                            p95,
                            qps,
                            load_s,
                            recall if name == "knn" else None,
                            per_100k,
                            extra if name == "knn" else {},
                        )
                    )
                    print(
                        f"[{size}] {backend} {name}: {n} queries, p50 {p50:.1f} ms, p95 {p95:.1f} ms"
                        + ("" if qps is None else f", {qps:.0f} q/s"),
                        flush=True,
                    )
                if backend == "opensearch" and not args.keep:
                    index.drop()
    print_table(rows, args, hnsw)
    print(f"figures: {record(retrieval_figures(rows, args, hnsw))}")


def retrieval_figures(rows, args, hnsw: HnswParams) -> list[dict]:
    figures = []
    for size, backend, name, n, p50, p95, qps, load_s, recall, per_100k, extra in rows:
        config = {"bench": "retrieval", "chunks": size, "backend": backend, "query": name, "k": args.k, "queries": n}
        if backend == "opensearch":
            config["hnsw"] = {"m": hnsw.m, "ef_construction": hnsw.ef_construction, "ef_search": hnsw.ef_search}
        figures += [figure("retrieval.p50", p50, "ms", **config), figure("retrieval.p95", p95, "ms", **config)]
        if qps is not None:
            figures.append(figure("retrieval.throughput", qps, "queries/s", **config, client_threads=args.threads))
        if recall is not None:
            figures.append(figure(f"retrieval.knn_recall_at_{args.k}", recall, "ratio", **config))
        if per_100k is not None:
            figures.append(figure("retrieval.vector_memory_per_100k", per_100k / 2**20, "MiB", **config))
        if "cold_s" in extra:
            figures.append(figure("retrieval.cold_start", extra["cold_s"], "s", **config))
        if name == "knn" and load_s is not None:
            figures.append(figure("retrieval.load", load_s, "s", **config))
    return figures


def print_table(rows, args, hnsw: HnswParams) -> None:
    print(
        f"\nk={args.k}, {args.queries} queries, throughput with {args.threads} client threads, "
        f"{'uniform' if args.uniform else 'low-rank'} {args.dim}-d vectors; "
        f"HNSW m={hnsw.m} ef_construction={hnsw.ef_construction} ef_search={hnsw.ef_search} (lucene); "
        f"embedded: {config.mesh().index_knn} scan (sq8: 8-bit, top max({RESCORE_FACTOR}k, {RESCORE_MIN}) rescored; "
        f"over {BINARY_MIN_ROWS:,} visible rows a 1-bit pass first, top max({BINARY_FACTOR}k, {BINARY_MIN}) rescored)"
    )
    header = (
        "chunks",
        "backend",
        "query",
        "n",
        "p50 ms",
        "p95 ms",
        "q/s",
        "load s",
        f"recall@{args.k}",
        "memory MiB/100k",
        "cold s",
        "after write ms",
    )
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for size, backend, name, n, p50, p95, qps, load_s, recall, per_100k, extra in rows:
        cells = (
            f"{size:,}",
            backend,
            name,
            str(n),
            f"{p50:.1f}",
            f"{p95:.1f}",
            "" if qps is None else f"{qps:.0f}",
            "" if load_s is None else f"{load_s:.0f}",
            "" if recall is None else f"{recall:.3f}",
            "" if per_100k is None else f"{per_100k / 2**20:.0f}",
            f"{extra['cold_s']:.1f}" if "cold_s" in extra else "",
            f"{extra['after_write_ms']:.1f}" if "after_write_ms" in extra else "",
        )
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
