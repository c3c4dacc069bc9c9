"""Which chat messages lean on the question before them, and the one question a conversation then asks."""

import json
import os

import pytest

from services.http.conversation import follow_up_rest, standalone_question
from shared.questions import separate_questions

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.mark.parametrize(
    "earlier, message, asked",
    [
        # An opener and at most two things named: what the message adds to the question before.
        (
            "what is the consumer refund window",
            "and for business customers?",
            "what is the consumer refund window; for business customers?",
        ),
        ("team plan price?", "what about Enterprise?", "team plan price; Enterprise?"),
        # A follow-up naming a thing of the kind the question before names ("plan") asks that question about it.
        ("team plan price", "And, the business plan?", "business plan price"),
        ("how much is the team plan", "what about the enterprise plan?", "how much is the enterprise plan"),
        (
            "how much storage does the team plan get",
            "and for the business plan?",
            "how much storage does the business plan get",
        ),
        # One naming only an amount asks the question before about it (found by use: composed, "who approves a 3000
        # refund; 200?" was answered with "more than 200 seats" and an on-call stipend of $200).
        ("who approves a 3000 refund", "and 200?", "who approves a 200 refund"),
        ("who approves a $3000 refund", "what about $200?", "who approves a $200 refund"),
        ("can i work from spain for 2 months", "and 6 months?", "can i work from spain for 6 months"),
        # Not an amount of another unit, nor one beside a thing of its own: those are composed.
        ("can i work from spain for 2 months", "and 6 weeks?", "can i work from spain for 2 months; 6 weeks?"),
        ("who approves a 3000 refund", "and 200 seats?", "who approves a 3000 refund; 200 seats?"),
        ("team plan price", "same for annual billing", "team plan price; annual billing"),
        # A message referring back and naming one thing.
        ("what does E-4421 mean", "how do i fix it?", "what does E-4421 mean; how do i fix it?"),
        ("onboarding package price", "is it refundable", "onboarding package price; is it refundable"),
        ("sso setup", "how long does it take?", "sso setup; how long does it take?"),
        ("what is E-4412", "and which cli command fixes it?", "what is E-4412; which cli command fixes it?"),
        # Questions of their own are asked as written.
        (
            "how much is the Team plan per month",
            "and what about the parental leave policy",
            "and what about the parental leave policy",
        ),
        (
            "how much is the Team plan per month",
            "how much is the Business plan per month",
            "how much is the Business plan per month",
        ),
        (
            "refund window",
            "is it possible to export data after we cancel",
            "is it possible to export data after we cancel",
        ),
        ("refund window", "is there a terraform provider", "is there a terraform provider"),
        ("refund window", "and", "and"),  # an opener alone adds nothing
        (
            "refund window",
            "can we swap our consultant if we dont like them",
            "can we swap our consultant if we dont like them",
        ),
        (
            "refund window",
            "we don't like our consultant, can we swap them",
            "we don't like our consultant, can we swap them",
        ),
    ],
)
def test_a_follow_up_is_asked_with_the_question_before_it(earlier, message, asked):
    assert standalone_question([earlier, message]) == asked


def test_a_follow_up_then_a_question_of_its_own_asks_each_on_its_own_line():
    """The gateway answers each line on its own (shared/questions.py): the follow-up with what it follows."""
    asked = standalone_question(
        ["what is the consumer refund window?", "and for business customers? also, who approves a $3000 refund?"]
    )
    assert asked == "what is the consumer refund window; for business customers?\nalso, who approves a $3000 refund?"
    assert separate_questions(asked) == [
        "what is the consumer refund window; for business customers?",
        "who approves a $3000 refund?",
    ]
    # Two questions of their own are asked as written.
    message = "how long are invoices kept? and who approves a $3000 refund?"
    assert standalone_question(["what is the consumer refund window?", message]) == message


def test_the_first_message_is_asked_as_written_even_when_it_reads_like_a_follow_up():
    assert standalone_question(["and for business customers?"]) == "and for business customers?"


def test_a_chain_of_follow_ups_reads_back_to_the_question_that_started_it():
    messages = ["refund window for consumers", "and for business?", "and for annual plans?"]
    assert standalone_question(messages) == "refund window for consumers; for annual plans?"


def test_a_long_earlier_question_is_not_repeated():
    long_question = "refund window " + "and some context " * 40
    assert standalone_question([long_question, "and for business?"]) == "and for business?"


def test_follow_up_rest_is_none_for_a_question_of_its_own():
    assert follow_up_rest("which regions have edge locations in japan") is None
    assert follow_up_rest("also for business?") == "for business?"


def test_none_of_the_labelled_questions_asked_alone_reads_as_a_follow_up():
    """Every labelled question is asked on its own; read as a follow-up, it would be asked with a question it
    does not follow."""
    with open(os.path.join(ROOT, "eval", "cases", "sample.jsonl"), encoding="utf-8") as cases:
        questions = [json.loads(line)["question"] for line in cases]
    assert len(questions) >= 400
    assert [q for q in questions if follow_up_rest(q) is not None] == []
