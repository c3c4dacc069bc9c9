"""A message's separate questions (shared/questions.py): parted only where each part stands alone."""

import json

import pytest

from shared.questions import separate_questions


@pytest.mark.parametrize(
    "message, questions",
    [
        (
            "1) how long are invoices kept 2) what is the hotel cap in london",
            ["how long are invoices kept", "what is the hotel cap in london"],
        ),
        (
            "how long are invoices kept? Also, what's the refund window?",
            ["how long are invoices kept?", "what's the refund window?"],
        ),
        # A question on each line, with a greeting, a lead-in, list markers and a sign-off around them.
        (
            "Hi team, two questions:\n1. whats E-4412\n2. how do i get a company credit card\nThanks!",
            ["whats E-4412", "how do i get a company credit card"],
        ),
        ("hotel cap nyc\nlost my laptop who do i tell", ["hotel cap nyc", "lost my laptop who do i tell"]),
        ("- sso on starter?\n- who approves a $3000 refund?", ["sso on starter?", "who approves a $3000 refund?"]),
        # A lead-in naming a topic is what each question below asks about.
        (
            "About travel:\n- hotel cap in london?\n- who approves trips over 5000?",
            ["About travel: hotel cap in london?", "About travel: who approves trips over 5000?"],
        ),
        # A pronoun after a question's own topic refers to that topic.
        (
            "1) E-4412 what is it and which cli command fixes it 2) parental leave how many weeks",
            ["E-4412 what is it and which cli command fixes it", "parental leave how many weeks"],
        ),
        ("in 2025 could customers request refunds by email? And the p1 response time?", None),
        # A name is something to look for on its own ("nwctl", "CFO": no English word), and a pronoun after what it
        # refers to in its own question refers to nothing in another.
        ("1) what is nwctl 2) latency to the frankfurt edge location", None),
        ("approval for a trip over 5000? And who is our CFO?", None),
        ("late payment interest rate\non-call pay and do they cover my phone bill", None),
        # A question told in the first person asks as well.
        ("1) i want to work from spain for 2 months who approves 2) password minimum length requirement", None),
        (
            "python sdk retries - which version added them and what's the backoff\nwhich release fixed samesite",
            None,
        ),
        ("how big is team storage and what happens when its full? And nwctl exited with status 3?", None),
        # "and" before a question's opening word joins two questions when each stands alone and refers to nothing.
        (
            "how long are invoices kept and who approves a $3000 refund?",
            ["how long are invoices kept", "who approves a $3000 refund?"],
        ),
        (
            "business class approval, and who is the incident lead for an outage",
            ["business class approval", "who is the incident lead for an outage"],
        ),
        # A long line is a line of its own when it ends on a word that closes a sentence, or when a list item follows.
        (
            "legal hold: does it stop deletion, and which add-on gives us legal hold\nsync resolve not working",
            None,
        ),
        (
            "1. annual plan cancelled after window 2026 refund + who approves a $3000 refund\n2. gpu instance pricing",
            None,
        ),
    ],
)
def test_a_message_of_questions_that_stand_alone_is_parted(message, questions):
    if questions is None:
        assert len(separate_questions(message)) == 2
    else:
        assert separate_questions(message) == questions


@pytest.mark.parametrize(
    "message",
    [
        # Follow-ups asking of the question before them.
        "what is the refund window? and what about business accounts?",
        "we took a client to dinner. can I expense wine? is it covered?",
        "team plan price? and for enterprise?",
        "and for business customers? also, who approves a $3000 refund?",  # the chat door's follow-up, joined on
        "what is the consumer refund window? for business customers?",
        # The asker's story or claim beside the question.
        "how long are invoices kept? I'm new here.",
        "is the refund window 14 days? I thought it was 30?",
        # A part asking too little to search for on its own.
        "refund window? fee?",
        "refund window? and what's the fee?",
        # A sign-off over the last lines is no question ("Priya" had been asked alone).
        "Good morning team,\n\nCould you please confirm how long we keep invoices?\n\nKind regards,\nPriya",
        # After a question mark, what is not a question says more of the question before it.
        "what's the uptime sla? (see https://status.northwindcloud.example)",
        "How long are invoices kept? We need this for an audit next month. Best, Dana",
        # One question in parts about one thing: the generator answers its parts from one search.
        "how big is team storage and what happens when its full",
        "trip to london: hotel cap and meal allowance",
        # A line wrapped by a mail client goes on with the sentence before it.
        "can you tell me how long we keep invoices for tax purposes and for how\nlong we keep payroll records",
    ],
)
def test_a_message_whose_parts_do_not_stand_alone_is_one_question(message):
    assert separate_questions(message) == [message]


def test_labelled_questions_are_parted_only_where_and_joins_two_that_stand_alone():
    """The sample set's questions each ask one thing, or one thing in parts ("how big is team storage and what happens
    when its full", "E-4412 what is it and which cli command fixes it": the second part refers to the first); only
    three join two questions that each stand alone with "and", and only those are parted."""
    with open("eval/cases/sample.jsonl", encoding="utf-8") as cases:
        questions = [json.loads(line)["question"] for line in cases if line.strip()]
    assert len(questions) > 400
    assert {q: separate_questions(q) for q in questions if separate_questions(q) != [q]} == {
        "who must be told about a SEV-S1 and where do security pages go": [
            "who must be told about a SEV-S1",
            "where do security pages go",
        ],
        "api v1 shutdown date and how do i see remaining quota in v2": [
            "api v1 shutdown date",
            "how do i see remaining quota in v2",
        ],
        "after termination how long to export and when is personal data wiped": [
            "after termination how long to export",
            "when is personal data wiped",
        ],
    }


SIGNATURE = "\n\nBest regards,\nDana Smith\nAcme Corp | Finance\nT: +44 20 7946 0000\nwww.acme.example"


def test_the_mail_around_a_message_asks_no_questions_of_it():
    """Found in the mesh: a question signed with a four-line signature block was read as five questions and refused
    (INVALID_ARGUMENT, over the limit of 4); each line of a quoted thread was a question too."""
    question = "how long are invoices kept?"
    assert separate_questions(f"Hi,\n\n{question}{SIGNATURE}") == [f"Hi,\n\n{question}{SIGNATURE}"]
    thread = "\n\nOn Mon, 7 Dec 2026, Sam wrote:\n> What is the hotel cap in London?\n> Who approves refunds?"
    assert separate_questions(f"{question}{thread}") == [f"{question}{thread}"]
    two = "1) how long are invoices kept 2) what is the hotel cap in london"
    assert separate_questions(f"{two}{thread}{SIGNATURE}") == [
        "how long are invoices kept",
        "what is the hotel cap in london",
    ]


def test_a_pasted_log_line_is_no_question_of_the_message():
    """Found by use: the log line above "what is the max timeout?" was answered as a question of its own."""
    message = (
        "nightly export keeps failing:\n2026-12-07 02:00:13,442 ERROR job-runner: E-4501 job exceeded time limit\n"
        "what is the max timeout?"
    )
    assert separate_questions(message) == [message]
