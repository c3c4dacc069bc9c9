"""Questions asked under a paragraph pasted from the documents: "Here's what I found in the docs:\n\n<a paragraph of
the question's gold document>\n\n{question}". People paste what they read and ask what it does not say; the paste's
words are the document's own, so the search finds the pasted passage again and an answer can echo it. Each labelled
question is asked under one paragraph, in one of a few forms, chosen with a seed (`ragmesh eval --pasted SEED`), on the
same cases and gold as the plain run:

- an answerable question under a paragraph of one of its gold documents that holds none of its evidence (the paste
  never answers the question itself), or of another document where its own have no such paragraph;
- an unanswerable question under a paragraph of a document chosen with the seed: the paste must not make an answer
  more likely.
"""

import dataclasses
import random
import re

from services.evaluation.cases import EvalCase, SourceTexts
from shared.text import PARAGRAPH_BREAK

FORMS = (
    "Here's what I found in the docs:\n\n{paragraph}\n\n{question}",
    "{paragraph}\n\n{question}",
    "I read this:\n\n{paragraph}\n\nSo {question}",
)
# A paragraph of running text: twelve words at least, not a heading, a table, a list or a file's front matter.
_MIN_WORDS = 12
_NOT_RUNNING_TEXT = re.compile(r"^\s*(?:#|\||[-*•]\s|\d+\.\s|---|```|[{\[<])")


def with_pasted(cases: list[EvalCase], corpus_dirs: list[str], seed: int) -> list[EvalCase]:
    """Every case with its question asked under a pasted paragraph, in one of FORMS."""
    rng = random.Random(seed)
    paragraphs = {key: _paragraphs(text) for key, text in SourceTexts(corpus_dirs).texts.items()}
    documents = sorted(key for key, found in paragraphs.items() if found)
    out = []
    for case in cases:
        evidence = [g.evidence for g in case.gold]
        pool = [
            p
            for g in case.gold
            for p in paragraphs.get((g.doc_id, g.version), [])
            if not any(e in p or p in e for e in evidence)
        ]
        paragraph = rng.choice(pool or paragraphs[rng.choice(documents)])
        question = rng.choice(FORMS).format(paragraph=paragraph, question=case.question)
        out.append(dataclasses.replace(case, question=question))
    return out


def _paragraphs(text: str) -> list[str]:
    return [
        " ".join(p.split())
        for p in PARAGRAPH_BREAK.split(text)
        if len(p.split()) >= _MIN_WORDS and not _NOT_RUNNING_TEXT.match(p)
    ]
