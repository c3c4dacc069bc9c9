"""Probes an erasure takes from text before deleting it: exact substrings, on one line, from prose and tables."""

from shared.erasure import distinctive_runs

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
