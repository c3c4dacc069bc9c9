from shared.text import answer_units, content_terms, heading_prefix, sentence_spans


def sentences(text):
    return [text[a:b] for a, b in sentence_spans(text)]


def test_versions_decimals_and_abbreviations_do_not_split():
    text = ("Upgrade to v2.1.0 before Friday. Pi is 3.14 here. Dr. Smith approved it, e.g. for the U.S. team. "
            "Run `nwctl sync. --force` now. Done!")
    assert sentences(text) == [
        "Upgrade to v2.1.0 before Friday.",
        "Pi is 3.14 here.",
        "Dr. Smith approved it, e.g. for the U.S. team.",
        "Run `nwctl sync. --force` now.",
        "Done!",
    ]


def test_sentence_spans_cover_every_non_whitespace_character():
    text = "One. Two?  Three!\nFour e.g. five. 6 items."
    covered = set()
    for a, b in sentence_spans(text):
        covered |= set(range(a, b))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())


def test_answer_units_split_table_rows_and_list_items_by_line():
    body = "| Plan | Price |\n| --- | --- |\n| Team | $79 |\n- first item\n- second. Still second."
    units = [body[a:b] for a, b in answer_units(body)]
    assert units == ["| Plan | Price |", "| Team | $79 |", "- first item", "- second. Still second."]


def test_content_terms_keep_identifiers_whole_and_drop_stopwords():
    assert content_terms("whats the fix for E-4412 in v2.1.0?") == {"fix", "e-4412", "v2.1.0"}
    assert content_terms("monthly prices") == {"month", "price"}


def test_heading_prefix_does_not_repeat_the_title():
    assert heading_prefix("Price List", ["Price List", "Plans"]) == "Price List > Plans"
    assert heading_prefix("Handbook", ["Refunds", "Timing"]) == "Handbook > Refunds > Timing"
