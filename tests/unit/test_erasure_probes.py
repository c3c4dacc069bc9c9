"""Probes an erasure takes from text before deleting it: exact substrings, on one line, from prose and tables."""

from shared.erasure import MAX_PROBES, distinctive_runs, pick_probes, scan_files, scan_text

ROWS = (
    "| Quay Tower | Dublin | +353 1 555 0142 | Padraig Oduya |\n"
    "| Marlow Works | Leeds | +44 113 555 0107 | Harriet Quenneville |"
)


def test_a_table_row_gives_probes_spanning_its_cell_separators():
    runs = distinctive_runs(ROWS, limit=4)
    assert runs and all(run in ROWS for run in runs)
    assert any(" | " in run for run in runs)


def test_no_probe_crosses_a_line_or_holds_what_json_escapes():
    text = 'Alpha Beta Gamma\nDelta Epsilon Zeta. He said "Omega Kappa Lambda Sigma Tau" \\ Upsilon Phi\tChi Psi'
    runs = distinctive_runs(text, limit=10)
    assert all("\n" not in r and '"' not in r and "\\" not in r and "\t" not in r for r in runs)
    assert "Omega Kappa Lambda Sigma Tau" in runs


def test_words_far_apart_are_not_one_probe():
    # A gap of more than four characters (an ellipsis and a dash) separates what the text does not join.
    assert distinctive_runs("Orion Vega .... -- Rigel Deneb Altair Mira", limit=4) == []


def test_a_tenant_erasure_asks_whether_a_probe_is_exclusive_only_until_it_has_enough():
    """Each question is an index query: a tenant of 5,000 documents was asked about all 10,000 of its runs
    (minutes on a large tenant) to keep 64."""
    texts = {f"doc-{n}": f"Invoice Q{n}X for Harbourview Logistics ref {n * 7} settled" for n in range(5000)}
    asked = []

    def exclusive(probe: str) -> bool:
        asked.append(probe)
        return len(asked) % 2 == 0  # every other run is held by another document too

    kept = pick_probes(texts, exclusive)
    assert len(kept) == MAX_PROBES and len(asked) == 2 * MAX_PROBES
    assert len({p.split()[1] for p in kept}) == MAX_PROBES  # round-robin: one document's run each


def test_scans_find_every_needle_even_where_two_overlap(tmp_path):
    """All needles are searched in one pass; a needle inside or overlapping another is still found."""
    text = "Kestrel Avenue 14 Lowmoor ch_0f3a9 and more"
    probes = ["Kestrel Avenue 14", "Avenue 14 Lowmoor", "Lowmoor", "absent words here"]
    ids = ["ch_0f3a9", "ch_0f3a", "ch_ffff"]
    by_text = scan_text(["unrelated", text], probes, ids)
    path = tmp_path / "store.bin"
    path.write_bytes(b"\x00" * 100_000 + text.encode() + b"\x00" * 10)
    by_bytes = scan_files([str(path), str(tmp_path / "missing")], probes, ids)
    for result in (by_text, by_bytes):
        assert (result.probes_checked, result.probes_found) == (4, 3)
        assert (result.ids_checked, result.ids_found) == (3, 2)
    assert scan_files([], probes, ids).probes_found == 0 and scan_text([], [], []).ids_found == 0


def test_a_tenant_erasure_reads_only_the_documents_it_takes_probes_from(monkeypatch):
    """Finding runs costs a pass over a document's words: a 20,000-document tenant spent 86% of its erasure
    finding runs in every document, to keep 64 from the first of them."""
    from shared import erasure

    read = []

    def counted(text, **kwargs):
        read.append(text)
        return distinctive_runs(text, **kwargs)

    monkeypatch.setattr(erasure, "distinctive_runs", counted)
    texts = {f"doc-{n}": f"Invoice Q{n}X for Harbourview Logistics ref {n * 7} settled" for n in range(5000)}
    kept = erasure.pick_probes(texts, lambda probe: True)
    assert len(kept) == MAX_PROBES and len(read) == MAX_PROBES
