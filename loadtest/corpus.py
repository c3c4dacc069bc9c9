"""What a load test ingests and asks: examples/ plus a SciFact slice, and questions drawn from the labelled
evaluation cases and SciFact's queries, interleaved so that neighbouring requests differ (no cache flatters them).

Everything goes into one tenant: one API key then serves every request of a ghz run."""

import glob
import json
from pathlib import Path

from services.cli.documents import collect_files, to_source_document
from services.evaluation.cases import beir_documents, read_jsonl
from shared.stubs import common_pb2

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCIFACT = Path(ROOT.parent / "shared" / "data" / "scifact")


def example_documents(folders: tuple[str, ...] = ()) -> list[common_pb2.SourceDocument]:
    """examples/, or only the named subfolders of it (uris stay relative to examples/, as a full ingest has them)."""
    found = collect_files([str(EXAMPLES)])
    if folders:
        found = [(path, uri) for path, uri in found if uri.split("/")[0] in folders]
    return [to_source_document(path, uri) for path, uri in found]


def scifact_queries(scifact: Path, limit: int) -> list[tuple[str, str, list[str]]]:
    """(query id, text, gold document ids) of the first `limit` train queries that have gold documents."""
    gold: dict[str, list[str]] = {}
    with open(scifact / "qrels" / "train.tsv", encoding="utf-8") as fh:
        for n, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if n == 0 and not parts[-1].isdigit():
                continue
            if float(parts[2]) > 0:
                gold.setdefault(parts[0], []).append(parts[1])
    queries = [(str(q["_id"]), q["text"], gold[str(q["_id"])]) for q in read_jsonl(scifact / "queries.jsonl")]
    return [q for q in queries if q[2]][:limit]


def scifact_documents(scifact: Path, queries: list[tuple[str, str, list[str]]], size: int) -> list:
    """A slice of `size` abstracts: the queries' gold documents first (so the queries have answers), then the
    corpus in its own order (distractors)."""
    wanted = [d for _, _, docs in queries for d in docs]
    rows = {doc_id: (doc_id, title, text) for doc_id, title, text in beir_documents(str(scifact))}
    chosen = list(dict.fromkeys([d for d in wanted if d in rows] + list(rows)))[:size]
    return [
        common_pb2.SourceDocument(
            meta=common_pb2.DocumentMeta(
                document_id=f"scifact-{doc_id}", title=title, source_uri=f"scifact/{doc_id}", content_type="text/plain"
            ),
            content=(text or title).encode(),
        )
        for doc_id, title, text in (rows[d] for d in chosen)
    ]


def eval_questions(pattern: str) -> list[str]:
    """Every labelled question of the evaluation case files matching `pattern` (relative to the repository)."""
    questions: list[str] = []
    for path in sorted(glob.glob(str(ROOT / pattern))):
        questions += [json.loads(line)["question"] for line in Path(path).read_text().splitlines() if line.strip()]
    return questions


def interleave(*lists: list[str]) -> list[str]:
    """a0 b0 a1 b1 ... then whatever the longer lists have left; duplicates dropped."""
    out: list[str] = []
    for i in range(max(map(len, lists), default=0)):
        out += [items[i] for items in lists if i < len(items)]
    return list(dict.fromkeys(out))
