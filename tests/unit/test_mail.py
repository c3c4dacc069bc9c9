from shared.chatter import without_chatter
from shared.mail import read_mail

QUESTION = "how long are invoices kept?"


def test_a_reply_s_quoted_thread_is_the_earlier_message_not_the_sender_s_words():
    for thread in (
        "On Mon, 7 Dec 2026, Sam wrote:\n> Please send the figures for the audit.",
        "On Mon, Dec 7, 2026 at 9:00 AM Sam Lee <sam@example.com> wrote:\n> Please send the figures for the audit.",
        "-----Original Message-----\nFrom: Sam Lee\nSent: Monday, December 7, 2026\nSubject: audit\n\n"
        "Please send the figures for the audit.",
        "Am 7. Dezember 2026 um 09:00 schrieb Sam <sam@example.de>:\n> Please send the figures for the audit.",
    ):
        mail = read_mail(f"{QUESTION}\n\n{thread}")
        assert mail.own == QUESTION, thread
        assert mail.earlier == "Please send the figures for the audit.", thread


def test_a_forward_carries_the_message_without_its_headers():
    mail = read_mail(
        "can you help with this?\n\n---------- Forwarded message ---------\nFrom: Customer <c@example.com>\n"
        f"Date: Mon, Dec 7, 2026\nSubject: invoices\nTo: support@example.com\n\n{QUESTION}"
    )
    assert (mail.own, mail.earlier) == ("can you help with this?", QUESTION)


def test_a_signature_a_banner_and_a_pasted_subject_are_not_the_sender_s_words():
    assert read_mail(f"{QUESTION}\n\n--\nDana Smith\nFinance Manager | Acme Corp").own == QUESTION
    assert read_mail(f"{QUESTION}\n-- \nDana").own == QUESTION
    # What follows a "--" line and asks is no signature.
    assert read_mail(f"see the log\n--\n{QUESTION}").own == f"see the log\n--\n{QUESTION}"
    banner = (
        "CAUTION: This email originated from outside the organization. Do not click links unless you trust the sender."
    )
    assert read_mail(f"{banner}\n\n{QUESTION}").own == QUESTION
    assert read_mail(f"Re: audit figures\n\n{QUESTION}") == ("audit figures", QUESTION, "")
    # A paragraph that asks is the sender's, whatever it says; a message of one line has no mail around it.
    asked = "Is this email confidential if it came from an external sender?"
    assert read_mail(f"{QUESTION}\n\n{asked}").own == f"{QUESTION}\n\n{asked}"
    assert read_mail("re: refund window -- consumers?") == ("", "re: refund window -- consumers?", "")


def test_what_a_message_asks_is_the_sender_s_words_or_the_message_they_point_at():
    """Found by the replay: with one quoted sentence under each, 1 of the 253 answerable train/dev questions was
    answered right (207 asked alone), with the Outlook block 1, with a four-line signature 17."""
    reply = f"{QUESTION}\n\nOn Mon, 7 Dec 2026, Sam wrote:\n> Please send the figures for the audit."
    assert without_chatter(reply) == QUESTION
    # A note that asks nothing, or points below, asks what the message under it asks.
    for note in ("can you help with this?", "see below", "FYI", "thoughts?"):
        forward = f"{note}\n\n-----Original Message-----\nFrom: Sam\nSent: Monday\nSubject: audit\n\n{QUESTION}"
        assert without_chatter(forward) == QUESTION, note
    claim = "is this still true?\n\nOn Mon, Sam wrote:\n> Invoices are kept for 10 years."
    assert without_chatter(claim) == "is this still true?\n\nInvoices are kept for 10 years."
    # The subject is the topic of a question that follows it up or refers to it, and no part of one that stands alone.
    assert without_chatter("Re: refund policy\n\nwhat about business customers?") == (
        "refund policy: what about business customers?"
    )
    assert without_chatter("Subject: invoice retention\n\nhow long do we keep them?") == (
        "invoice retention: how long do we keep them?"
    )
    assert without_chatter("Re: audit figures\n\nwho is our CFO") == "who is our CFO"


def test_every_labelled_question_is_read_back_out_of_each_mail_template():
    """The property `ragmesh eval --mailed` relies on: each labelled question sent in each of its templates reads as
    itself, but for the pasted subject, which is the topic of a question that follows up or refers back."""
    from services.evaluation.cases import load_cases
    from services.evaluation.mailed import TEMPLATES
    from shared.story import follows_up, refers_back

    for case in load_cases("eval/cases/sample.jsonl", ["examples"]):
        plain = without_chatter(case.question)
        for template in TEMPLATES:
            read = without_chatter(template.format(question=case.question)).rstrip("?")
            if template.startswith("Re: ") and (follows_up(plain) or refers_back(plain)):
                assert read == f"audit figures: {plain}".rstrip("?"), (template, case.question)
            else:
                assert read == plain.rstrip("?"), (template, case.question)
