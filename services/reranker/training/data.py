"""Training material for the cross-encoder: groups of (query, one positive, hard negatives).

Hard negatives come from the project's own hybrid retriever (through a gateway `Search`), so the
model learns to separate exactly the near-misses the first stage puts on top. Two sources:
- labelled: BEIR qrels (a query and its relevant documents);
- self-supervised: the corpus's own structure, a document's title as the query and its body
  (title removed, so the answer is not a string match) as the positive; or one of its sentences as
  the query and the rest of the document (that sentence cut out) as the positive: the inverse cloze
  task, which looks like a claim searched for the abstract that supports it.

Every list is ordered deterministically and sampled with a seeded RNG, so a run is reproducible.
"""

import dataclasses
import functools
import hashlib
import json
import random
from pathlib import Path

from shared.ratelimit import within_rate_limit
from shared.text import sentence_spans


@dataclasses.dataclass
class Candidate:
    doc_id: str
    text: str  # what the cross-encoder reads for this passage
    first_rank: int  # 1-based rank in the first-stage (fused) order


@dataclasses.dataclass
class Query:
    query_id: str
    text: str
    gains: dict[str, float]  # doc id -> graded relevance
    candidates: list[Candidate]  # first-stage order, one per document


@dataclasses.dataclass
class Group:
    query: str
    passages: list[str]  # passages[0] is the positive


# Mining imports the mesh's modules where it runs, so training from mined files needs none of them.


def retrieve(stub, tenant: str, query: str, depth: int, timeout: float = 60.0) -> list[Candidate]:
    """The hybrid first stage, best chunk per document, as the gateway returns it (no reranking)."""
    from services.reranker.cross_encoder import rerank_text
    from shared.stubs import gateway_pb2, retriever_pb2

    request = gateway_pb2.SearchRequest(
        tenant_id=tenant, query=query, top_k=depth * 2, mode=retriever_pb2.RETRIEVAL_MODE_HYBRID, rerank=False
    )
    response, _ = within_rate_limit(lambda: stub.Search(request, timeout=timeout))
    seen: dict[str, Candidate] = {}
    for result in response.results:
        doc = result.chunk.meta.document_id
        if doc not in seen:
            seen[doc] = Candidate(doc, rerank_text(result.chunk), len(seen) + 1)
    return list(seen.values())[:depth]


def mine_queries(stub, cases: list, depth: int, progress=None) -> list[Query]:
    out = []
    for n, case in enumerate(cases, start=1):
        out.append(
            Query(
                case.case_id,
                case.question,
                {g.doc_id: g.gain for g in case.gold},
                retrieve(stub, case.tenant, case.question, depth),
            )
        )
        if progress and (n % 100 == 0 or n == len(cases)):
            progress(f"mined {n}/{len(cases)} queries")
    return out


def mine_titles(stub, beir_dir: str, tenant: str, count: int, depth: int, seed: int, progress=None) -> list[Query]:
    """Self-supervised queries: `count` titles drawn with the seed; the positive is the body alone."""
    from services.evaluation.cases import beir_documents

    docs = [(d, t, x) for d, t, x in beir_documents(beir_dir) if t.strip() and x.strip()]
    random.Random(seed).shuffle(docs)
    out = []
    for n, (doc_id, title, body) in enumerate(docs[:count], start=1):
        found = [c for c in retrieve(stub, tenant, title, depth) if c.doc_id != doc_id]
        # The positive is the body without its title; so is every negative, or the model would learn
        # "has a title" instead of relevance.
        candidates = [Candidate(doc_id, body, 0)] + [
            Candidate(c.doc_id, _strip_title(c.text), c.first_rank) for c in found
        ]
        out.append(Query(f"title:{doc_id}", title, {doc_id: 1.0}, candidates))
        if progress and (n % 250 == 0 or n == count):
            progress(f"mined {n}/{count} title queries")
    return out


def sentences(text: str) -> list[str]:
    """The chunker's and generator's sentence boundaries (shared.text), so a cloze query is a sentence as
    the rest of the mesh cuts one (abbreviations, decimals and version numbers do not end it)."""
    return [text[start:end].strip() for start, end in sentence_spans(text)]


def cloze(title: str, body: str, rng: random.Random, min_words: int = 6, max_words: int = 60):
    """(a sentence of the body, title + the body without it), or None when the body is too short to
    lose a sentence and still be about something."""
    parts = sentences(body)
    picks = [i for i, s in enumerate(parts) if min_words <= len(s.split()) <= max_words]
    if len(parts) < 3 or not picks:
        return None
    i = rng.choice(picks)
    rest = " ".join(parts[:i] + parts[i + 1 :])
    return parts[i], f"{title}\n{rest}" if title.strip() else rest


def mine_sentences(stub, beir_dir: str, tenant: str, count: int, depth: int, seed: int, progress=None) -> list[Query]:
    """Self-supervised inverse-cloze queries: a sentence drawn from each of `count` seeded documents; the
    positive is the rest of its document (title kept, as the reranker reads passages), the negatives
    what the hybrid retriever finds for the sentence in other documents."""
    from services.evaluation.cases import beir_documents

    rng = random.Random(seed + 1)
    docs = [(d, t, x) for d, t, x in beir_documents(beir_dir) if x.strip()]
    random.Random(seed + 1).shuffle(docs)
    out = []
    for doc_id, title, body in docs[:count]:
        picked = cloze(title, body, rng)
        if picked is None:
            continue
        sentence, positive = picked
        found = [c for c in retrieve(stub, tenant, sentence, depth) if c.doc_id != doc_id]
        out.append(Query(f"sentence:{doc_id}", sentence, {doc_id: 1.0}, [Candidate(doc_id, positive, 0)] + found))
        if progress and len(out) % 250 == 0:
            progress(f"mined {len(out)} sentence queries")
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
            extra = [c for c in rng.sample(pool, min(len(pool), random_negatives * 4)) if c.doc_id not in q.gains][
                :random_negatives
            ]
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
    """JSON lines; each passage text is written once (a `{"text_id", "text"}` line before its first use)
    and candidates refer to it by `text_id`: the same abstracts come back for many queries."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ids: dict[str, int] = {}
    with open(path, "w", encoding="utf-8") as fh:
        for q in queries:
            refs = []
            for c in q.candidates:
                if c.text not in ids:
                    ids[c.text] = len(ids)
                    fh.write(json.dumps({"text_id": ids[c.text], "text": c.text}) + "\n")
                refs.append({"doc_id": c.doc_id, "text_id": ids[c.text], "first_rank": c.first_rank})
            fh.write(json.dumps({"query_id": q.query_id, "text": q.text, "gains": q.gains, "candidates": refs}) + "\n")


def load_queries(path: Path) -> list[Query]:
    """Reads what save_queries writes (and the older form with each candidate's text inline)."""
    out, texts = [], {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "query_id" not in row:
            texts[row["text_id"]] = row["text"]
            continue
        candidates = [
            Candidate(c["doc_id"], c["text"] if "text" in c else texts[c["text_id"]], c["first_rank"])
            for c in row["candidates"]
        ]
        out.append(Query(row["query_id"], row["text"], row["gains"], candidates))
    return out


def mine_headings(gateway, chunker, documents, tenant: str, depth: int, progress=None) -> list[Query]:
    """Self-supervised queries from a corpus in any format the chunker reads: a chunk's innermost
    heading is the query, its body the positive, the hybrid retriever's other hits the negatives.
    `documents` are SourceDocuments; chunk ids are the identities (the corpus is already ingested)."""
    from shared.stubs import chunker_pb2, gateway_pb2, retriever_pb2

    out = []
    for doc in documents:
        doc.meta.tenant_id = tenant
        chunks = chunker.ChunkDocument(chunker_pb2.ChunkDocumentRequest(document=doc), timeout=60).chunks
        for chunk in chunks:
            if not chunk.heading_path or not chunk.body.strip():
                continue
            query = chunk.heading_path[-1]
            request = gateway_pb2.SearchRequest(
                tenant_id=tenant, query=query, top_k=depth, mode=retriever_pb2.RETRIEVAL_MODE_HYBRID, rerank=False
            )
            response, _ = within_rate_limit(functools.partial(gateway.Search, request, timeout=60))
            found = [
                Candidate(r.chunk.chunk_id, _without_headings(r.chunk), rank)
                for rank, r in enumerate(response.results, start=1)
            ]
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
