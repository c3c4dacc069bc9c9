from shared.chatter import without_chatter


def test_a_greeting_a_sign_off_and_phrases_of_asking_are_not_the_question():
    """Found by use: "Hello, could you please let me know how long invoices are retained? Thanks!" was refused at
    coverage 0.27 ("hello", "thanks" held by no passage), and "Good morning. I would like to know the per diem for
    international travel. Regards, Sam" refused by the generator ("sam" the rarest word asked)."""
    assert without_chatter("Hello, could you please let me know how long invoices are retained? Thanks!") == (
        "how long invoices are retained?"
    )
    assert without_chatter(
        "Good morning. I would like to know the per diem for international travel. Regards, Sam"
    ) == ("the per diem for international travel")
    assert without_chatter("hi there! quick question: what's the hotel cap in london?") == (
        "what's the hotel cap in london?"
    )
    assert without_chatter("Hey team, is there a fee for paypal refunds? thanks in advance") == (
        "is there a fee for paypal refunds?"
    )
    assert without_chatter("sorry if this is obvious but how long are application logs kept") == (
        "how long are application logs kept"
    )
    assert without_chatter("urgent!!! api returns E-2410 what now") == "api returns E-2410 what now"


def test_the_same_words_inside_a_question_stay():
    for question in (
        "which plan is best",  # "best" closes it, as no sign-off
        "is the best regards policy written down",
        "urgent incident severity",  # "urgent" as a word of the question, not a cry
        "how do i say thank you to support",
        "who is the best contact for refunds",
    ):
        assert without_chatter(question) == question
    # A question that is all chatter is read as written: nothing else would be left.
    assert without_chatter("thanks!") == "thanks!"
    assert without_chatter("hello") == "hello"
