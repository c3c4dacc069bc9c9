"""Train / dev / test splits of the labelled cases, by document, so nothing is tuned on what it is judged on.

An answerable case belongs to the split of its first gold document; every document is in exactly one split,
so a model trained on the train split has never seen a test document's wording. Unanswerable cases have no
document: they are split by a hash of their id. The document assignment is committed
(eval/cases/splits.json) and made by `python -m services.evaluation.splits`: a seeded search for the
assignment whose splits are closest to 50/20/30 overall and within each category.
"""

import collections
import hashlib
import json
import random
import sys
from pathlib import Path

SPLITS = {"train": 0.5, "dev": 0.2, "test": 0.3}
DEFAULT_FILE = "eval/cases/splits.json"
SEED, TRIES = 15, 20000


def primary_document(row: dict) -> str:
    return row["gold"][0]["doc_id"]


def unanswerable_split(case_id: str) -> str:
    """Stable for a case id, in the same proportions as the documents (also the split of a BEIR
    answerability query, whose relevance is per query)."""
    bucket = int(hashlib.sha256(case_id.encode()).hexdigest()[:8], 16) % 10
    return "train" if bucket < 5 else ("dev" if bucket < 7 else "test")


def _imbalance(assignment: dict[str, str], answerable: list[dict]) -> float:
    per_category = collections.Counter((assignment[primary_document(r)], r["category"]) for r in answerable)
    per_split = collections.Counter(assignment[primary_document(r)] for r in answerable)
    categories = collections.Counter(r["category"] for r in answerable)
    score = sum(
        (per_category[(s, c)] - share * n) ** 2 / n for c, n in categories.items() for s, share in SPLITS.items()
    )
    return score + sum((per_split[s] - share * len(answerable)) ** 2 for s, share in SPLITS.items()) / len(answerable)


def assign_documents(rows: list[dict], seed: int = SEED, tries: int = TRIES) -> dict[str, str]:
    answerable = [r for r in rows if r.get("gold")]
    documents = sorted({primary_document(r) for r in answerable})
    rng = random.Random(seed)
    best, best_score = {}, float("inf")
    for _ in range(tries):
        candidate = {d: rng.choices(list(SPLITS), weights=list(SPLITS.values()))[0] for d in documents}
        score = _imbalance(candidate, answerable)
        if score < best_score:
            best, best_score = candidate, score
    return best


class Splits:
    def __init__(self, documents: dict[str, str]):
        self.documents = documents

    @classmethod
    def load(cls, path: str = DEFAULT_FILE) -> "Splits":
        return cls(json.loads(Path(path).read_text())["documents"])

    def of(self, case_id: str, gold_doc_ids: list[str]) -> str:
        if not gold_doc_ids:
            return unanswerable_split(case_id)
        split = self.documents.get(gold_doc_ids[0])
        if split is None:
            raise ValueError(
                f"case {case_id}: document {gold_doc_ids[0]!r} has no split in {DEFAULT_FILE}; "
                "add it (python -m services.evaluation.splits reassigns every document)"
            )
        return split


def main() -> None:
    cases = sys.argv[1] if len(sys.argv) > 1 else "eval/cases/sample.jsonl"
    rows = [json.loads(line) for line in Path(cases).read_text().splitlines() if line.strip()]
    documents = assign_documents(rows)
    Path(DEFAULT_FILE).write_text(
        json.dumps(
            {
                "rule": __doc__.split("\n\n")[1].replace("\n", " "),
                "cases": Path(cases).name,
                "seed": SEED,
                "documents": dict(sorted(documents.items())),
            },
            indent=2,
        )
        + "\n"
    )
    counts = collections.Counter(Splits(documents).of(r["id"], [g["doc_id"] for g in r.get("gold", [])]) for r in rows)
    print(f"{DEFAULT_FILE}: {dict(counts)}")


if __name__ == "__main__":
    main()
