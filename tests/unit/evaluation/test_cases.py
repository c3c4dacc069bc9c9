import json

import pytest

from services.evaluation.cases import load_beir, load_cases


def test_evidence_resolves_to_a_span_in_its_document_version(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "p.md").write_text("---\ndoc_id: policy\nversion: 2026\n---\n# P\n\nRefunds within 14 days.\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        json.dumps(
            {
                "id": "q1",
                "question": "refund window",
                "tenant": "t",
                "category": "general",
                "gold": [{"doc_id": "policy", "version": "2026", "evidence": "Refunds within 14 days."}],
            }
        )
        + "\r\n"
        + json.dumps({"id": "q2", "question": "ceo?", "tenant": "t", "gold": []})
        + "\r\n"
    )
    loaded = load_cases(str(cases), [str(corpus)])
    text = (corpus / "p.md").read_text()
    gold = loaded[0].gold[0]
    assert text[gold.start : gold.end] == "Refunds within 14 days."
    assert not loaded[1].answerable and loaded[1].category == "unanswerable"


def test_evidence_that_is_not_verbatim_is_rejected(tmp_path):
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nexact words\n")
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({"id": "q1", "question": "?", "gold": [{"doc_id": "a.md", "evidence": "paraphrase"}]}))
    with pytest.raises(ValueError, match="q1: evidence not found verbatim"):
        load_cases(str(cases), [str(corpus)])


def test_beir_with_crlf_and_a_header_row(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text('{"_id": "d1", "title": "T", "text": "x"}\r\n')
    (tmp_path / "queries.jsonl").write_text('{"_id": "1", "text": "q one"}\r\n{"_id": "2", "text": "q two"}\r\n')
    (tmp_path / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\r\n1\td1\t1\r\n2\td1\t0\r\n")
    cases = load_beir(str(tmp_path), "train")
    assert [(c.case_id, [g.doc_id for g in c.gold]) for c in cases] == [("1", ["d1"])]
    assert load_beir(str(tmp_path), "train", {"2"}) == []


def test_beir_answerability_leaves_out_every_gold_document_of_the_unanswerable_share():
    from services.evaluation.cases import EvalCase, Gold, beir_answerability

    cases = [EvalCase(f"q{i}", "claim", "t", "beir", [Gold(f"d{i}"), Gold("shared")]) for i in range(200)]
    out, excluded = beir_answerability(cases, 0.5)
    unanswerable = [c for c in out if not c.answerable]
    assert 60 < len(unanswerable) < 140  # about half, by a hash of the id
    assert {f"d{c.case_id[1:]}" for c in unanswerable} | {"shared"} == excluded
    # A kept query loses a gold document that a held-out query shares, and stays answerable by its own.
    assert all([g.doc_id for g in c.gold] == [f"d{c.case_id[1:]}"] for c in out if c.answerable)
    assert {c.split for c in out} == {"train", "dev", "test"}
    assert beir_answerability(cases, 0.5) == (out, excluded)
