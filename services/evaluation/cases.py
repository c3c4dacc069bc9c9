"""Evaluation inputs: the project's case format (evidence quoted from documents) and BEIR.

Case format, one JSON object per line:
  {"id", "question", "tenant", "category", "gold": [{"doc_id", "version", "evidence"}]}
Gold evidence is a quote, not a chunk id (chunk ids change with the chunker); it is resolved to a
character span in its source document here, and a retrieved chunk is relevant when its span holds
the evidence.
"""

import dataclasses
import hashlib
import json
from pathlib import Path

from services.chunker.parsing import read_document
from services.cli.documents import collect_files
from services.evaluation.splits import Splits, unanswerable_split
from shared.errors import InvalidArgument

UNANSWERABLE = "unanswerable"


def reported_answerable(case: dict) -> bool:
    """Whether a report's case (report.json) was answerable: as recorded, or for a report from before it was
    recorded, every category but "unanswerable" (a near miss of --withhold-gold is unanswerable in any category)."""
    return case.get("answerable", case["category"] != UNANSWERABLE)


@dataclasses.dataclass(frozen=True)
class Gold:
    doc_id: str
    version: str = ""
    evidence: str = ""
    start: int = -1  # resolved span in the source text (case format)
    end: int = -1
    gain: float = 1.0

    @property
    def key(self) -> str:
        return f"{self.doc_id}@{self.version}:{self.start}" if self.evidence else self.doc_id


@dataclasses.dataclass
class EvalCase:
    case_id: str
    question: str
    tenant: str
    category: str
    gold: list[Gold]
    split: str = ""  # train | dev | test for the project's cases (by document); "" for BEIR
    exclude_document_ids: tuple[str, ...] = ()  # documents the question's search leaves out
    # Asked together with another question in one message (services/evaluation/together.py): which of the message's
    # separate questions (AskResponse.parts) is this case's own.
    part: int | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.gold)


def read_jsonl(path: Path) -> list[dict]:
    # newline=None turns CRLF into LF, so files written on Windows load the same.
    with open(path, encoding="utf-8", newline=None) as fh:
        return [json.loads(line) for line in fh if line.strip()]


class SourceTexts:
    """The ingested corpus as the chunker saw it: (doc_id, version) -> the text chunk offsets point
    into (the decoded file for Markdown and plain text, the chunker's canonical text for HTML, PDF,
    DOCX and JSON threads), so evidence spans line up with chunk spans."""

    def __init__(self, corpus_dirs: list[str]):
        self.texts: dict[tuple[str, str], str] = {}
        for path, uri in collect_files(corpus_dirs):
            try:
                parsed = read_document(path.read_bytes(), uri)
            except InvalidArgument:
                continue  # the chunker rejects it too, so no evidence can live there
            fields = parsed.fields
            self.texts[(str(fields.get("doc_id") or uri), str(fields.get("version") or "1"))] = parsed.text

    def locate(self, gold: dict, case_id: str) -> Gold:
        key = (gold["doc_id"], gold.get("version") or "1")
        text = self.texts.get(key)
        if text is None:
            raise ValueError(f"case {case_id}: no document {key[0]!r} version {key[1]!r} in the corpus")
        start = text.find(gold["evidence"])
        if start < 0:
            raise ValueError(f"case {case_id}: evidence not found verbatim in {key[0]}@{key[1]}: {gold['evidence']!r}")
        return Gold(key[0], key[1], gold["evidence"], start, start + len(gold["evidence"]))


def load_cases(path: str, corpus_dirs: list[str], splits_file: str | None = None) -> list[EvalCase]:
    """Cases with their gold spans resolved; each gets its split from `splits_file` (default: splits.json
    beside the cases, when there is one)."""
    sources = SourceTexts(corpus_dirs)
    splits_path = Path(splits_file) if splits_file else Path(path).with_name("splits.json")
    splits = Splits.load(str(splits_path)) if splits_path.exists() else None
    cases = []
    for row in read_jsonl(Path(path)):
        gold = [sources.locate(g, row["id"]) for g in row.get("gold", [])]
        split = splits.of(row["id"], [g.doc_id for g in gold]) if splits else ""
        cases.append(
            EvalCase(
                row["id"],
                row["question"],
                row.get("tenant", "demo"),
                row.get("category", "general") if gold else UNANSWERABLE,
                gold,
                split,
            )
        )
    ids = [c.case_id for c in cases]
    if len(ids) != len(set(ids)):
        raise ValueError(f"{path}: duplicate case ids")
    return cases


def beir_tenant(beir_dir: str) -> str:
    """A tenant per corpus content: re-ingestion is skipped while the corpus is unchanged."""
    digest = hashlib.sha256(Path(beir_dir, "corpus.jsonl").read_bytes()).hexdigest()[:12]
    return f"beir-{Path(beir_dir).name}-{digest}"


def load_beir(beir_dir: str, split: str, query_ids: set[str] | None = None) -> list[EvalCase]:
    root = Path(beir_dir)
    queries = {str(q["_id"]): q["text"] for q in read_jsonl(root / "queries.jsonl")}
    qrels: dict[str, dict[str, float]] = {}
    with open(root / "qrels" / f"{split}.tsv", encoding="utf-8", newline=None) as fh:
        for n, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if n == 0 and not parts[-1].lstrip("-").isdigit():
                continue  # header row
            qid, did, score = parts[0], parts[1], float(parts[2])
            if score > 0:
                qrels.setdefault(qid, {})[did] = score
    tenant = beir_tenant(beir_dir)
    return [
        EvalCase(qid, queries[qid], tenant, "beir", [Gold(doc_id=d, gain=g) for d, g in sorted(rels.items())])
        for qid, rels in sorted(qrels.items())
        if qid in queries and (query_ids is None or qid in query_ids)
    ]


def beir_answerability(cases: list[EvalCase], unanswerable_share: float) -> tuple[list[EvalCase], set[str]]:
    """An answerability domain from a BEIR split (a standard construction): a fixed share of the queries
    (by a hash of their id) have every gold document left out of the ingested corpus, so nothing in it
    answers them; the rest keep theirs and are answered right when a citation names a gold document.
    Returns the cases (unanswerable ones without gold) and the documents to leave out."""

    def held_out(case: EvalCase) -> bool:
        digest = hashlib.sha256(f"unanswerable:{case.case_id}".encode()).hexdigest()
        return int(digest[:8], 16) / 2**32 < unanswerable_share

    excluded = {g.doc_id for c in cases if held_out(c) for g in c.gold}
    out = []
    for c in cases:
        kept = [g for g in c.gold if g.doc_id not in excluded]
        # Split by a hash of the query id, so a calibration can be fitted on train/dev and judged on test.
        out.append(
            dataclasses.replace(
                c, gold=kept, category="beir" if kept else UNANSWERABLE, split=unanswerable_split(c.case_id)
            )
        )
    return out, excluded


def beir_documents(beir_dir: str):
    """(doc_id, title, text) for every corpus row."""
    for row in read_jsonl(Path(beir_dir, "corpus.jsonl")):
        yield str(row["_id"]), row.get("title", ""), row.get("text", "")
