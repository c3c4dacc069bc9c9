from shared.spelling import corrected, corrections

PASSAGES = [
    "Refund Policy > Annual plans",
    "Annual plans cancelled within the 14-day window are refunded in full.",
    "The office lease ends in May. Police and policies.",
]


def test_a_misspelled_word_reads_as_the_passage_word_one_edit_from_it():
    assert corrected("wat is the refund polcy for anual plans", PASSAGES) == (
        "wat is the refund policy for annual plans"
    )
    assert corrections("REFND window?", PASSAGES) == {"refnd": "refund"}  # any case; a dropped letter


def test_real_words_short_words_and_ties_are_left_as_written():
    assert corrections("parental leave", PASSAGES) == {}  # "leave" is a word, though "lease" is one edit away
    assert corrections("anul plns", PASSAGES) == {}  # under five letters
    assert corrections("plocies", PASSAGES) == {}  # two edits from "policies", and short of nine letters
    # "policx" is one edit from both "policy" and "police": no guess.
    assert corrections("policx", ["policy", "police"]) == {}


def test_letters_of_any_script_are_read_whole():
    """'bogota' is one slip from 'Bogotá'; read as ASCII, 'Bogotá' was the word 'bogot'."""
    assert corrected("when did the bogota edge open", ["| bog1 | Bogotá | Colombia |"]) == (
        "when did the bogotá edge open"
    )


def test_a_question_most_of_whose_words_are_unknown_is_left_as_written():
    """Another language, not slips: "lange" is one edit from "large", but the question is German."""
    passages = ["Large refunds need approval. Annual plans are refunded in full."]
    assert corrections("wie lange dauert die Rückerstattung für Jahrespläne", passages) == {}
    assert corrections("how lange for annual refunds", passages) == {"lange": "large"}  # one slip among words


def test_question_words_do_not_count_as_unknown():
    """'whats' is no English word but a question word: one slip among the rest is still read."""
    assert corrections("whats in the on-call handver note", ["Handover notes go in the on-call channel"]) == {
        "handver": "handover"
    }


def test_the_same_word_in_the_other_number_is_not_a_slip():
    """Found by use: "how much notice before adding a subprocessor" was read as "... subprocessors"."""
    passages = ["Provider may engage new subprocessors with 30 days' notice."]
    assert corrections("how much notice before adding a subprocessor", passages) == {}
    assert corrections("how much notice before adding a subprocesor", passages) == {"subprocesor": "subprocessors"}


def test_nearest_words_that_are_one_word_in_two_numbers_read_as_it():
    """Found by use: "hotell" is one edit from both "hotel" and "hotels", which are one word, not a tie."""
    passages = ["The nightly hotel cap is $350 in New York, San Francisco and London. Hotels are booked in Navan."]
    assert corrections("hotell cap in san francisco", passages) == {"hotell": "hotel"}


def test_a_question_whose_unknown_words_are_each_a_slip_is_read():
    """Two slips in a short question make most of its words unknown, as another language would: each has its
    passage word, so the question is read; the German one is not ("dauert" is no slip of anything)."""
    passages = ["The nightly hotel cap is $350 in New York, San Francisco and London. Hotels are booked in Navan."]
    assert corrections("hotell cap san fransisco", passages) == {"hotell": "hotel", "fransisco": "francisco"}
    assert corrections("wie lange dauert die Rückerstattung", ["Large refunds need approval."]) == {}


def test_an_identifier_typed_without_its_hyphen_reads_as_the_passages_write_it():
    """Found by use: "E4412" and "e 4421" were refused (the passages write E-4412, E-4421, and no word matched)."""
    passages = ["E-4412 Sync conflict", "Meaning: see W-2204 and E-4421; ISO 27001 certified."]
    assert corrected("E4412", passages) == "E-4412"
    assert corrected("how to fix e 4421 and w2204", passages) == "how to fix E-4421 and W-2204"
    # Only an identifier the passages write hyphenated; a function word before a number is no letter part.
    assert corrected("iso 27001 certified? e4413", passages) == "iso 27001 certified? e4413"
    assert corrected("a 300 dollar refund", ["see A-300"]) == "a 300 dollar refund"


def test_two_words_typed_with_a_hyphen_read_apart_as_the_passages_write_them():
    """Found by use: "per-diem international" was answered at coverage 0.37 ("perdiem" is no passage word)."""
    passages = ["The daily meal allowance (per diem) is $75.", "Error E-4412 and Add-ons; send an email."]
    assert corrected("per-diem international", passages) == "per diem international"
    assert corrected("e4412 per-diem", passages) == "E-4412 per diem"
    # Kept where a passage writes them hyphenated or as one word, or never writes them apart.
    assert corrected("add-on price", passages) == "add-on price"
    assert corrected("e-mail support", passages) == "e-mail support"
    assert corrected("follow-up actions", passages) == "follow-up actions"


def test_a_slip_of_an_english_word_the_passages_hold_in_another_form_is_read():
    """Found by asking the train/dev questions with one slip in their longest word (a swap of two letters): 193 of
    253 answered right, against 207 asked plainly; "who apporves a $1000 refund" was refused, the passages writing
    "approval" and "approved", never "approves". Reading English words whose term the passages hold: 204."""
    passages = ["Refunds from $250 to $2,500 require approval by a Billing Specialist.", "The Compliance Add-on."]
    assert corrections("who apporves a 1000 refund", passages) == {"apporves": "approves"}
    assert corrections("compilance addon price", passages) == {"compilance": "compliance"}  # "addon" is held
    assert corrections("W-2203 wanring", ["W-2203 Approaching storage quota (a warning)"]) == {"wanring": "warning"}
    assert corrections("what did we do anyhting", passages) == {"anyhting": "anything"}
    # An English word the passages know nothing of is no reading: "navan" stays (not "naval"); nearer than any
    # passage word, it is the slip, and the passage word is no reading either ("austarlian" is not "australia").
    assert corrections("book through navan", passages) == {}
    assert corrections("price in austarlian dollars", ["Region: Australia; Currency: AUD"]) == {}
