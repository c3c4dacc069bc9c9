"""Effective dates and "replaces" statements read from a document's own text."""

from services.chunker.supersession import infer, match_replaced
from shared.model import DocumentMeta


def _stated(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for s in infer(text):
        found.setdefault(s.field, []).append(s.value)
    return found


def test_the_usual_phrasings():
    assert _stated("# Returns 2026\n\nEffective 2026-03-01. Replaces the 2025 policy.\n") == {
        "effective_from": ["2026-03-01"],
        "supersedes": ["the 2025 policy"],
    }
    assert _stated("In force from 1 March 2026; it supersedes the Travel Policy (2024 edition).") == {
        "effective_from": ["2026-03-01"],
        "supersedes": ["the Travel Policy (2024 edition)"],
    }
    assert _stated("Valid from March 5th, 2026.") == {"effective_from": ["2026-03-05"]}
    assert _stated("Effective date: 2026-3-9") == {"effective_from": ["2026-03-09"]}


def test_dates_that_are_not_stated_as_effective_are_not_read():
    assert _stated("The meeting on 2026-04-01 agreed a new budget. Invoices from 2025 are archived.") == {}
    assert _stated("Effective immediately, doors lock at 8.") == {}  # no date: nothing guessed
    assert _stated("Effective 2026-02-31.") == {}  # not a date


def test_a_replacement_is_read_only_where_the_document_replaces_a_document():
    assert _stated("This policy replaces the 2025 Refund Policy for all purchases.") == {
        "supersedes": ["the 2025 Refund Policy for all purchases"]
    }
    assert _stated("These terms supersede all prior agreements between the parties.") == {
        "supersedes": ["all prior agreements between the parties"]
    }
    assert _stated("# Travel\n\n- Supersedes the 2024 edition.\n") == {"supersedes": ["the 2024 edition"]}
    assert _stated("The 2025 travel policy is replaced by this policy.") == {"supersedes": ["The 2025 travel policy"]}
    assert _stated("Effective 2026-03-01. This replaces the 2025 edition.")["supersedes"] == ["the 2025 edition"]
    assert _stated("This replaces the legacy upload page.") == {}
    # What a product, a feature or a study replaces is not a document being replaced.
    assert _stated("The new dashboard replaces the legacy upload page with a drag-and-drop area.") == {}
    assert _stated("This release replaces the legacy upload page.") == {}
    assert _stated("This feature replaces the old 2024 importer.") == {}
    assert _stated("Costs fell by replacing the Random Forest importance with a comparable measure.") == {}
    assert _stated("The faster cache is replaced by this one.") == {}


def test_a_replaced_document_is_matched_by_year_and_topic():
    stored = [
        {"document_id": d, "title": t, "source_uri": d, "effective_from": "2020-01-01T00:00:00Z"}
        for d, t in (
            ("returns-2025.md", "Returns policy 2025"),
            ("travel-2025.md", "Travel policy 2025"),
            ("returns-2024.md", "Returns policy 2024"),
        )
    ]
    ids = [c["document_id"] for c in match_replaced("the 2025 policy", "Returns policy 2026", stored)]
    assert ids == ["returns-2025.md"]
    ids = [c["document_id"] for c in match_replaced("the travel policy", "Travel 2026", stored)]
    assert ids == ["travel-2025.md"]
    assert match_replaced("the 2023 policy", "Returns policy 2026", stored) == []


def _chunk(chunker, text: str, uri: str = "policies/returns-2026.md", **meta):

    fields = {"document_id": "", "version": "", "access_scopes": [], **meta}
    return chunker.chunk(text.encode(), DocumentMeta(tenant_id="t", source_uri=uri, **fields))


def test_the_chunker_applies_an_inferred_date_and_reports_every_statement(chunker):
    meta, _, statements = _chunk(chunker, "# Returns\n\nEffective 2026-03-01. Replaces the 2025 policy.\n")
    assert meta.effective_from == "2026-03-01"
    assert [(s.field, s.value, s.source) for s in statements] == [
        ("effective_from", "2026-03-01", "text"),
        ("supersedes", "the 2025 policy", "text"),
    ]


def test_front_matter_overrides_what_the_text_says(chunker):
    front = "---\neffective_from: 2026-04-01\nsupersedes: policies/returns-2024.md\n---\n"
    text = front + "# R\n\nEffective 2026-03-01. Replaces the 2025 policy.\n"
    meta, _, statements = _chunk(chunker, text)
    assert meta.effective_from == "2026-04-01"
    assert [(s.field, s.value, s.source) for s in statements] == [
        ("supersedes", "policies/returns-2024.md", "front matter")
    ]
    meta, _, statements = _chunk(chunker, "---\nsupersedes: none\n---\n# R\n\nReplaces the 2025 policy.\n")
    assert statements == [] and meta.effective_from == "1970-01-01"


def test_only_the_head_of_a_document_states_what_it_is(chunker):
    """A date or a replacement stated past the first section is about something in the document: release
    notes announcing "Effective 2027-02-01, the Team plan allows 600 requests per minute" were dated 2027 as a
    whole, so none of their passages was retrieved until then."""
    text = (
        "# Release notes 2.3\n\nThe upload limit rises from 5 GB to 10 GB.\n\n"
        "## Rate limits\n\nEffective 2027-02-01, the Team plan allows 600 requests per minute. "
        "This version replaces the 2.2 notes.\n"
    )
    meta, _, statements = _chunk(chunker, text, uri="notes/2.3.md")
    assert statements == [] and meta.effective_from == "1970-01-01"
    meta, _, statements = _chunk(
        chunker, "# Travel policy\n\n" + "Trips are booked early. " * 100 + "Effective 2027-01-01."
    )
    assert statements == [] and meta.effective_from == "1970-01-01"  # past the head's 2,000 characters
    meta, _, statements = _chunk(chunker, text.replace("## Rate limits\n\n", ""), uri="notes/2.3.md")
    assert meta.effective_from == "2027-02-01"
    assert [(s.field, s.value) for s in statements] == [
        ("effective_from", "2027-02-01"),
        ("supersedes", "the 2.2 notes"),
    ]
