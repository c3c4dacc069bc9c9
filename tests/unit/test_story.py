from services.evaluation.stories import TEMPLATES
from shared.story import kept_context, search_text, searched_for, told_and_asked
from shared.text import content_terms


def test_a_question_is_read_from_where_it_asks_after_the_story():
    assert told_and_asked(
        "I'm staying in San Francisco next week, what's the max I can spend on a hotel per night?"
    ) == (
        "I'm staying in San Francisco next week",
        "what's the max I can spend on a hotel per night?",
    )
    assert told_and_asked("My manager asked me this morning and I couldn't find it. How long are invoices kept?") == (
        "My manager asked me this morning and I couldn't find it.",
        "How long are invoices kept?",
    )
    # After full sentences, words that open no question are still what is asked.
    assert told_and_asked("I'm new here and still learning. refund window consumer") == (
        "I'm new here and still learning.",
        "refund window consumer",
    )
    assert (
        told_and_asked("I was reading the docs last night and got confused: hotel cap london")[1] == "hotel cap london"
    )


def test_a_question_without_a_story_or_asking_about_the_story_is_read_whole():
    for question in (
        "how long are invoices kept",
        "we took a client to dinner and ordered wine, is it covered?",  # "it" is the story
        "My laptop was stolen this morning. What should I do?",  # asks nothing of its own
        "trip to london: hotel cap and meal allowance",  # a topic, not a story
        "legal hold: does it stop deletion, and which add-on gives us legal hold",
        "Vitamin D lowers the risk of fractures, which causes fewer falls.",  # a statement
    ):
        assert told_and_asked(question) == ("", question)
    assert told_and_asked("we start at 10:00 - when are core hours") == ("we start at 10:00", "when are core hours")


def test_a_story_keeps_its_conditions_and_what_the_passages_write():
    written = {"trip", "cost", "total", "starter", "plan", "san", "francisco"}
    told = kept_context("I'm on the Starter plan and my trip to Texas will cost about 3200 in total", written)
    assert told.required == content_terms("Texas 3200")  # a name no passage writes, a number
    assert told.optional == {"starter", "plan", "trip", "cost", "total"}
    assert "3200 in total" in told.text  # read as a sum, with the words around it
    told = kept_context("I'm staying in San Francisco next week", written)
    assert told.required == set() and told.optional == {"san", "francisco"}  # "staying", "next week": the telling
    assert kept_context("a customer in Spain paid in euros", set()).required >= content_terms("Spain euros")


def test_words_before_a_question_told_without_i_or_we_name_its_topic():
    for question in (
        "E-5002 overdue invoice - when do you suspend us",
        "paid in EUR, will my refund come back in dollars",
        "going to tokyo next week, do i need pre approval",
    ):
        assert told_and_asked(question) == ("", question)


def test_it_standing_for_nothing_is_no_question_about_the_story():
    assert told_and_asked("I'm new here. how long does it take to set up a dedicated region")[1] == (
        "how long does it take to set up a dedicated region"
    )
    assert told_and_asked("I'm new here. is it possible to pay by wire")[1] == "is it possible to pay by wire"
    question = "I joined a gym last week. can I expense it as wellness?"
    assert told_and_asked(question) == ("", question)


def test_an_identifier_in_a_story_is_a_condition_even_where_the_passages_write_it():
    told = kept_context("I got E-4421 on my Mac this morning", {"e-4421", "mac", "morning"})
    assert "e-4421" in told.required and "mac" in told.optional
    assert "morning" not in told.optional  # when it happened: the telling


def test_a_story_is_searched_for_by_its_numbers_and_names_only():
    assert searched_for("I'm staying in San Francisco next week, what's the max I can spend on a hotel per night?") == (
        "San Francisco what's the max I can spend on a hotel per night?"
    )
    assert searched_for("My manager asked me this morning and I couldn't find it. how long are invoices kept") == (
        "how long are invoices kept"
    )
    assert searched_for("my trip to Texas will cost about 3200 in total, who signs off?") == "Texas 3200 who signs off?"
    assert searched_for("how long are invoices kept") == "how long are invoices kept"


def test_a_story_told_after_the_question_is_not_the_question():
    assert told_and_asked("how long are invoices kept? I'm new here and still learning.") == (
        "I'm new here and still learning.",
        "how long are invoices kept?",
    )
    assert told_and_asked("refund window consumer - asking because my manager wants to know") == (
        "asking because my manager wants to know",
        "refund window consumer",
    )
    for question in (
        "E-5002 overdue invoice - when do you suspend us",  # the question after the dash
        "how long are invoices kept? and what about contracts",  # a second question, no story
    ):
        assert told_and_asked(question) == ("", question)


def test_a_closing_sentence_saying_why_it_is_asked_tells_even_after_a_question_saying_we():
    """ "{question}... asking again since nobody answered" was answered right 55 times of the 253 answerable train/dev
    questions (the replay), and a question saying "we" was read as the story and the reason as the question."""
    assert told_and_asked("how long are invoices kept... asking again since nobody answered") == (
        "asking again since nobody answered",
        "how long are invoices kept",
    )
    assert told_and_asked("credit if we got 99.5%… asking again since nobody answered") == (
        "asking again since nobody answered",
        "credit if we got 99.5%",
    )
    assert told_and_asked("scim on starter?... asking again") == ("asking again", "scim on starter?")


def test_the_askers_story_in_parentheses_is_told_too():
    """ "{question} (I checked the handbook but couldn't find it)" answered 105 of the 253 answerable train/dev
    questions right in the replay (207 asked plainly)."""
    assert told_and_asked("how long are invoices kept (I checked the handbook but couldn't find it)") == (
        "I checked the handbook but couldn't find it",
        "how long are invoices kept",
    )
    assert told_and_asked("can we get phone support (we're on the Team plan)?") == (
        "we're on the Team plan",
        "can we get phone support?",
    )
    assert told_and_asked("what is the sla (99.9%)") == ("", "what is the sla (99.9%)")  # not told


def test_what_the_answer_is_needed_for_is_not_searched_for_but_its_conditions_are():
    """A mail's "We need this for an audit next month." had "audit" (which the passages write) searched for with the
    question: in the mesh, 0.755 of the train/dev questions so asked were answered right, 0.818 after."""
    story, asked = told_and_asked("We need this for an audit next month. how long are invoices kept?")
    assert search_text(story, asked, {"audit", "month", "invoice"}) == "how long are invoices kept?"
    assert not kept_context(story, {"audit", "month"}).optional
    story, asked = told_and_asked("We need it for a customer in Germany. can we pay in euros?")
    assert search_text(story, asked, {"customer", "germany"}) == "Germany can we pay in euros?"
    assert kept_context(story, {"customer", "germany"}).required == {"germany"}


def test_workplace_shorthand_in_a_story_names_nothing():
    """ "{question}?\n\n(I'm OOO tomorrow, so a quick answer would be great)": "OOO" was required of the answer as a
    name the passages never write, and 157 of the 253 answerable train/dev questions were answered right in the
    replay; 207 now, as asked plainly. A name the passages never write stays a condition."""
    for story in ("I'm OOO tomorrow, so a quick answer would be great", "need it by EOD", "I'm WFH today"):
        assert not kept_context(story, {"answer"}).required
        assert searched_for(f"how long are invoices kept? {story}") == "how long are invoices kept?"
    assert kept_context("I'm on the Platinum plan", {"plan"}).required == {"platinum"}


def test_what_a_message_labels_as_its_context_is_the_story():
    assert told_and_asked(
        "Context: we're on the Business plan and have 60 users. Question: how much does an extra seat cost?"
    ) == ("we're on the Business plan and have 60 users.", "how much does an extra seat cost?")
    assert told_and_asked("how long are invoices kept? Context: finance audit") == (
        "finance audit",
        "how long are invoices kept?",
    )
    assert told_and_asked("Background: annual Team plan, bought 20 days ago. can we get a refund?") == (
        "annual Team plan, bought 20 days ago.",
        "can we get a refund?",
    )
    question = "what is the context: of the incident"  # no label: asked whole
    assert told_and_asked(question) == ("", question)


def test_a_condition_the_question_asks_under_is_the_questions_own():
    """ "If we cancel after 2 months, do we get a refund?" had been read as a story ("If we cancel after 2 months")
    and a question ("do we get a refund?") that no longer said what it asked about."""
    for question in ("If we cancel after 2 months, do we get a refund?", "when we renew, is the price locked?"):
        assert told_and_asked(question) == ("", question)
    assert told_and_asked(
        "my manager asked me to find out - if we cancel our annual team plan after 2 months, do we get anything back?"
    ) == (
        "my manager asked me to find out",
        "if we cancel our annual team plan after 2 months, do we get anything back?",
    )
    assert told_and_asked("I'm on starter, can I get phone support?") == ("I'm on starter", "can I get phone support?")


def test_a_topic_naming_something_of_the_askers_is_no_story():
    question = "E-4412 on my mac - how do i fix the sync"
    assert told_and_asked(question) == ("", question)
    assert told_and_asked("my laptop was stolen at a cafe - who do i tell first")[0] == "my laptop was stolen at a cafe"


def test_a_story_before_a_comma_or_a_reason_after_a_dash_is_told_too():
    assert told_and_asked("A customer just called me about this, refund window consumer") == (
        "A customer just called me about this",
        "refund window consumer",
    )
    assert told_and_asked("refund window consumer - need this for a customer") == (
        "need this for a customer",
        "refund window consumer",
    )
    question = "refund window - need a receipt?"  # a second question, not a reason
    assert told_and_asked(question) == ("", question)


def test_an_abbreviation_ends_no_sentence_and_a_topic_colon_no_story():
    assert told_and_asked("A customer just called me about this, are prices incl. VAT")[1] == "are prices incl. VAT"
    assert told_and_asked("A customer just called me about this, old policy: business asks for refund")[1] == (
        "old policy: business asks for refund"
    )


def test_who_told_or_asked_is_not_searched_for():
    written = {"customer", "trial", "team", "plan"}
    assert searched_for("A customer just called me about this, can the trial be extended", written) == (
        "can the trial be extended"
    )
    assert searched_for("a customer on the Team plan asked me, can the trial be extended", written) == (
        "Team plan can the trial be extended"
    )
    assert "customer" not in kept_context("A customer just called me about this", written).optional


def test_every_labelled_train_and_dev_question_is_read_back_from_its_story():
    """The property the generator and the gateway rely on: told after (or before) a story, each of the sample
    set's train and dev questions is read as itself, so it is answered as when asked plainly; and no plain question
    is read as told after a story."""
    from services.evaluation.cases import load_cases

    questions = [c.question for c in load_cases("eval/cases/sample.jsonl", ["examples"]) if c.split in ("train", "dev")]
    assert len(questions) > 300
    read_whole = 0
    for question in questions:
        assert told_and_asked(question) == ("", question)
        for story in TEMPLATES:
            told, asked = told_and_asked(story.format(question=question.rstrip("?")))
            if told:
                assert asked.rstrip("?") == question.rstrip("?"), (story, question, asked)
            else:
                read_whole += 1  # a question asking about its story ("is it ...") is read whole
    assert read_whole < len(questions) * len(TEMPLATES) * 0.05


def test_an_amount_a_story_tells_of_chooses_between_answers_and_is_not_required():
    told = kept_context("I'm in London for 3 nights next week", {"london", "night"})
    assert told.required == set() and {"3", "london"} <= told.optional
    assert told_and_asked("our api calls fail with 429 since this morning. what is the rate limit?")[1] == (
        "what is the rate limit?"
    )
