from services.generator.extractive import ExtractiveGenerator
from shared.asker_quotes import asker_quote, asks_of_its_own, may_hold_paste, pasted_quote, quoted_passages
from tests.unit.generator.test_extractive import passage

MSA = (
    "3.1 Customer will pay the fees stated in the Order Form.\n\n"
    "3.2 Invoices are due within 30 days of the invoice date.\n"
)
DPA = (
    "3.2 Northwind will notify Customer at least 30 days before adding a new Sub-processor. Customer may object on "
    "reasonable data protection grounds within 15 days of the notice.\n"
)
TAXES = "Prices exclude taxes. Taxes are added to each invoice where the law requires them.\n"


def test_a_quote_and_the_question_asked_of_it_are_read_apart():
    read = asker_quote('The MSA says "Customer will pay the fees stated in the Order Form" - does that include taxes?')
    assert (read.quote, read.rest) == (
        "Customer will pay the fees stated in the Order Form",
        "does that include taxes?",
    )
    read = asker_quote('According to the DPA, "Northwind will notify Customer at least 30 days". Can we object?')
    assert read.rest == "Can we object?"
    assert (
        asker_quote('Can we object to "Northwind will notify Customer at least 30 days"?').rest == "Can we object to ?"
    )
    # Quoted lines, as a mail or Markdown quotes them.
    read = asker_quote(
        "Re your note:\n> Late submissions (more than 60 days)\n> are not reimbursed.\n\nwhat about 45 days?"
    )
    assert (read.quote, read.rest) == (
        "Late submissions (more than 60 days)\nare not reimbursed.",
        "what about 45 days?",
    )
    # A short quote is a name or an error message the question asks about as it is.
    assert asker_quote('I get "E-4412 conflict" when syncing') is None
    assert asker_quote("what is the refund window") is None


def test_a_quote_is_found_up_to_case_spacing_and_punctuation():
    msa, dpa = passage(MSA, doc="msa"), passage(DPA, doc="dpa")
    assert quoted_passages("customer will pay the fees stated in the order form", [dpa, msa]) == [msa]
    assert quoted_passages("Customer will pay the fees\nstated in the Order Form!", [msa]) == [msa]
    assert quoted_passages("Customer will pay every fee", [msa, dpa]) == []


def test_a_question_asked_of_a_quote_is_answered_from_the_quoted_document_only():
    """Found by use (the demo mesh): of ten messages quoting a document and asking about it, six were answered by
    echoing the quote or by another document's sentence ("taxes" held by a price list for a question about the MSA's
    fees clause); now the quoted document answers the rest of the message, or nothing does."""
    msa, dpa, prices = passage(MSA, doc="msa"), passage(DPA, doc="dpa"), passage(TAXES, doc="prices")
    taxes = 'The MSA says "Customer will pay the fees stated in the Order Form" - does that include taxes?'
    assert ExtractiveGenerator().run(taxes, [msa, prices]).abstained
    # Asked without the quote's anchor, the price list's sentence answers: the question is about taxes in general.
    assert not ExtractiveGenerator().run("do the fees include taxes?", [msa, prices]).abstained
    answer = ExtractiveGenerator().run(
        'According to the DPA, "Northwind will notify Customer at least 30 days before adding a new Sub-processor". '
        "Can we object?",
        [dpa, msa],
    )
    assert [c.quote for c in answer.citations] == [
        "Customer may object on reasonable data protection grounds within 15 days of the notice."
    ]


def test_a_quote_only_checked_or_followed_up_is_read_with_the_question():
    msa = passage(MSA, doc="msa")
    answer = ExtractiveGenerator().run(
        '"Customer will pay the fees stated in the Order Form" - is that still true?', [msa]
    )
    assert answer.citations[0].quote == "3.1 Customer will pay the fees stated in the Order Form."
    # A quote found in no passage (the asker's paraphrase) leaves the question as it came.
    paraphrased = 'The MSA says "invoices must be paid in 30 days" - when are invoices due?'
    answer = ExtractiveGenerator().run(paraphrased, [msa])
    assert answer == ExtractiveGenerator().run(paraphrased.replace('"', ""), [msa])
    assert answer.citations[0].quote.startswith("3.2")


def test_sentences_pasted_from_a_passage_are_told_from_the_question_under_them():
    msa, dpa = passage(MSA, doc="msa"), passage(DPA, doc="dpa")
    message = (
        "Here's what the contract says:\n\nCustomer will pay the fees stated in the Order Form. Invoices are due "
        "within 30 days of the invoice date.\n\nSo can we pay by card?"
    )
    read, found_in = pasted_quote(message, [dpa, msa])
    assert read.rest == "So can we pay by card?" and found_in == [msa]
    assert read.quote.startswith("Customer will pay the fees")
    # A short sentence pasted beside a long one is pasted too ("Usage-based charges are not refundable.").
    read, _ = pasted_quote(
        "Customer will pay the fees stated in the Order Form. Invoices are due.\n\nCan we pay by card?", [msa]
    )
    assert read.rest == "Can we pay by card?"
    # A question of the asker's own, or a short sentence a passage happens to hold, is not pasted.
    assert pasted_quote("when are invoices due?", [msa]) is None
    assert pasted_quote("Invoices are due. What about fees?", [msa]) is None
    # Nothing but pasted text: nothing else to ask.
    assert pasted_quote("Invoices are due within 30 days of the invoice date.", [msa]) is None


def test_what_is_asked_of_a_quote_asks_of_its_own_unless_it_only_checks_or_follows_it_up():
    assert asks_of_its_own("does that include taxes?")
    assert not asks_of_its_own("is that still true?")
    assert not asks_of_its_own("what about Business?")


def test_only_a_message_of_two_sentences_one_long_may_hold_a_paste():
    assert may_hold_paste("I read this:\n\nCustomer will pay the fees stated in the Order Form.\n\nwhen are they due?")
    assert not may_hold_paste("under the 2025 policy who approved refunds above 5k")
    assert not may_hold_paste("We bought in 2025. Can we get a refund?")
    told = "My manager asked me this morning and I couldn't find it. How long are invoices kept?"
    assert may_hold_paste(told) and not may_hold_paste(told, but_the_askers=True)
