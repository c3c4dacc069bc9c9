from services.generator.extractive import ExtractiveGenerator
from services.generator.listing import MAX_ITEMS, listed_terms
from tests.unit.generator.test_extractive import passage

ADDONS = (
    "| Add-on | Price | Available on |\n| --- | --- | --- |\n| Extra Storage (1 TB) | $40 per month | All plans |\n"
    "| Priority Support | $150 per month | Team, Business |\n| Dedicated Region | $2,000 per month | Enterprise |\n\n"
    "SCIM provisioning is included in Enterprise at no extra cost.\n"
)
LEVELS = (
    "- P1: full outage of a core service.\n- P2: partial outage affecting more than 10% of requests.\n"
    "- P3: minor degradation with a workaround available.\n- P4: cosmetic issue, no customer impact.\n"
)
REFUNDS = "Annual plans cancelled within the 14-day window are refunded in full. Monthly plans are not refunded.\n"


def test_a_question_asking_what_there_is_of_a_kind_names_the_kind():
    assert listed_terms("what add-ons are there") == {"addon"}
    assert listed_terms("list all severity levels") == {"severity", "level"}
    assert listed_terms("which plans do you offer?") == {"plan"}
    assert listed_terms("what kinds of plans exist") == {"plan"}
    assert listed_terms("what are the severity levels") == {"severity", "level"}
    # Questions asking one thing, not what there is.
    assert listed_terms("what is the refund window") == set()
    assert listed_terms("which plan has sso") == set()
    assert listed_terms("how many plans are there") == set()


def test_a_list_question_is_answered_by_the_table_named_for_the_kind_whole():
    """Found by use: "what add-ons are there" was answered with "SCIM provisioning is included in Enterprise at no
    extra cost" (under the "Add-ons" heading, holding "add-on" by it) and "which plans are there" with the refund
    policy's sentences on annual plans."""
    gen = ExtractiveGenerator()
    answer = gen.run(
        "what add-ons are there", [passage(REFUNDS, path=("Refunds",)), passage(ADDONS, path=("Add-ons",))]
    )
    assert [c.quote for c in answer.citations] == [
        "| Extra Storage (1 TB) | $40 per month | All plans |",
        "| Priority Support | $150 per month | Team, Business |",
        "| Dedicated Region | $2,000 per month | Enterprise |",
    ]
    assert answer.coverage == 1.0
    # Named by its first column where the heading does not name it.
    named_by_column = gen.run("list the add-ons", [passage(ADDONS, path=("Price list",))])
    assert len(named_by_column.citations) == 3


def test_every_item_of_a_named_list_is_quoted_up_to_a_limit():
    """ "what are the severity levels" quoted three of the four levels (the answer's usual number of units)."""
    answer = ExtractiveGenerator().run("what are the severity levels", [passage(LEVELS, path=("Severity levels",))])
    assert [c.quote.split(":")[0] for c in answer.citations] == ["- P1", "- P2", "- P3", "- P4"]
    many = "".join(f"- Level {n}: the level numbered {n}.\n" for n in range(1, 12))
    assert len(ExtractiveGenerator().run("list the levels", [passage(many, path=("Levels",))]).citations) == MAX_ITEMS


def test_a_list_question_naming_more_than_the_kind_is_answered_as_before():
    """The list's name must hold every word the kind has: "list the add-ons for enterprise" is not answered by the
    whole add-on table, nor a kind no list is named for by the first list."""
    gen = ExtractiveGenerator()
    answer = gen.run("list the add-ons for enterprise", [passage(ADDONS, path=("Add-ons",))])
    assert len(answer.citations) < 3
    assert gen.run("what integrations are there", [passage(ADDONS, path=("Add-ons",))]).abstained
