"""Training material for the cross-encoder: groups of (query, one positive, hard negatives).

Hard negatives come from the project's own hybrid retriever (through a gateway `Search`), so the
model learns to separate exactly the near-misses the first stage puts on top. Two sources:
- labelled: BEIR qrels (a query and its relevant documents);
- self-supervised: the corpus's own structure, a document's title as the query and its body
  (title removed, so the answer is not a string match) as the positive.

Every list is ordered deterministically and sampled with a seeded RNG, so a run is reproducible.
"""

import dataclasses
import hashlib
import json
import random
from pathlib import Path

from services.evaluation.cases import EvalCase, beir_documents
from services.reranker.cross_encoder import passage_text
from shared.stubs import gateway_pb2

HYBRID = 1


@dataclasses.dataclass
class Candidate:
    doc_id: str
    text: str          # what the cross-encoder reads for this passage
    first_rank: int    # 1-based rank in the first-stage (fused) order


@dataclasses.dataclass
class Query:
    query_id: str
    text: str
    gains: dict[str, float]            # doc id -> graded relevance
    candidates: list[Candidate]        # first-stage order, one per document


@dataclasses.dataclass
class Group:
    query: str
    passages: list[str]   # passages[0] is the positive


def retrieve(stub, tenant: str, query: str, depth: int, timeout: float = 60.0) -> list[Candidate]:
    """The hybrid first stage, best chunk per document, as the gateway returns it (no reranking)."""
    response = stub.Search(gateway_pb2.SearchRequest(tenant_id=tenant, query=query, top_k=depth * 2, mode=HYBRID,
                                                     rerank=False), timeout=timeout)
    seen: dict[str, Candidate] = {}
    for result in response.results:
        doc = result.chunk.meta.document_id
        if doc not in seen:
            seen[doc] = Candidate(doc, passage_text(result.chunk), len(seen) + 1)
    return list(seen.values())[:depth]


def mine_queries(stub, cases: list[EvalCase], depth: int, progress=None) -> list[Query]:
    out = []
    for n, case in enumerate(cases, start=1):
        out.append(Query(case.case_id, case.question, {g.doc_id: g.gain for g in case.gold},
                         retrieve(stub, case.tenant, case.question, depth)))
        if progress and (n % 100 == 0 or n == len(cases)):
            progress(f"mined {n}/{len(cases)} queries")
    return out


def mine_titles(stub, beir_dir: str, tenant: str, count: int, depth: int, seed: int, progress=None) -> list[Query]:
    """Self-supervised queries: `count` titles drawn with the seed; the positive is the body alone."""
    docs = [(d, t, x) for d, t, x in beir_documents(beir_dir) if t.strip() and x.strip()]
    random.Random(seed).shuffle(docs)
    out = []
    for n, (doc_id, title, body) in enumerate(docs[:count], start=1):
        found = [c for c in retrieve(stub, tenant, title, depth) if c.doc_id != doc_id]
        # The positive is the body without its title; so is every negative, or the model would learn
        # "has a title" instead of relevance.
        candidates = [Candidate(doc_id, body, 0)] + [Candidate(c.doc_id, _strip_title(c.text), c.first_rank)
                                                     for c in found]
        out.append(Query(f"title:{doc_id}", title, {doc_id: 1.0}, candidates))
        if progress and (n % 250 == 0 or n == count):
            progress(f"mined {n}/{count} title queries")
    return out


def _strip_title(text: str) -> str:
    head, sep, rest = text.partition("\n")
    return rest.strip() if sep and rest.strip() else text


def groups(queries: list[Query], negatives: int, rng: random.Random, random_negatives: int = 1) -> list[Group]:
    """One group per (query, relevant document found by the first stage): the positive, `negatives`
    hard negatives drawn from the non-relevant candidates, and `random_negatives` from another query's."""
    pool = [c for q in queries for c in q.candidates]
    out = []
    for q in queries:
        positives = [c for c in q.candidates if q.gains.get(c.doc_id, 0) > 0]
        hard = [c for c in q.candidates if q.gains.get(c.doc_id, 0) <= 0]
        for pos in positives:
            chosen = rng.sample(hard, min(negatives, len(hard)))
            extra = [c for c in rng.sample(pool, min(len(pool), random_negatives * 4))
                     if c.doc_id not in q.gains][:random_negatives]
            out.append(Group(q.text, [pos.text] + [c.text for c in chosen + extra]))
    # Groups must all be the same size to batch them as one tensor.
    size = 1 + negatives + random_negatives
    return [g for g in out if len(g.passages) == size]


def split_ids(ids: list[str], fraction: float, salt: str = "ragmesh-tune") -> tuple[list[str], list[str]]:
    """(rest, held) with `held` a stable hash-chosen `fraction` of the ids, independent of their order."""
    held = [i for i in ids if int(hashlib.sha256(f"{salt}:{i}".encode()).hexdigest(), 16) % 1000 < fraction * 1000]
    held_set = set(held)
    return [i for i in ids if i not in held_set], held


def save_queries(path: Path, queries: list[Query]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for q in queries:
            fh.write(json.dumps(dataclasses.asdict(q)) + "\n")


def load_queries(path: Path) -> list[Query]:
    out = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out.append(Query(row["query_id"], row["text"], row["gains"], [Candidate(**c) for c in row["candidates"]]))
    return out


def mine_headings(gateway, chunker, documents, tenant: str, depth: int, progress=None) -> list[Query]:
    """Self-supervised queries from a corpus in any format the chunker reads: a chunk's innermost
    heading is the query, its body the positive, the hybrid retriever's other hits the negatives.
    `documents` are SourceDocuments; chunk ids are the identities (the corpus is already ingested)."""
    from shared.stubs import chunker_pb2

    out = []
    for doc in documents:
        doc.meta.tenant_id = tenant
        chunks = chunker.ChunkDocument(chunker_pb2.ChunkDocumentRequest(document=doc), timeout=60).chunks
        for chunk in chunks:
            if not chunk.heading_path or not chunk.body.strip():
                continue
            query = chunk.heading_path[-1]
            response = gateway.Search(gateway_pb2.SearchRequest(tenant_id=tenant, query=query, top_k=depth,
                                                                mode=HYBRID, rerank=False), timeout=60)
            found = [Candidate(r.chunk.chunk_id, _without_headings(r.chunk), rank)
                     for rank, r in enumerate(response.results, start=1)]
            if not any(c.doc_id == chunk.chunk_id for c in found):
                found.append(Candidate(chunk.chunk_id, _without_headings(chunk), len(found) + 1))
            out.append(Query(f"heading:{chunk.chunk_id}", query, {chunk.chunk_id: 1.0}, found))
    if progress:
        progress(f"mined {len(out)} heading queries")
    return out


def _without_headings(chunk) -> str:
    """The body minus its own heading lines, so "the heading is in the text" is not what is learned."""
    own = {h.strip().lower() for h in chunk.heading_path}
    lines = [line for line in chunk.body.splitlines() if line.strip().lstrip("#").strip().lower() not in own]
    return "\n".join(lines).strip() or chunk.body
