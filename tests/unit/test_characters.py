import re

from shared.characters import plain_characters
from shared.chatter import without_chatter
from shared.questions import separate_questions


def _full_width(text: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ("\u3000" if ch == " " else ch) for ch in text)


def test_what_input_methods_word_processors_and_clipboards_write_reads_as_plain_characters():
    assert plain_characters("ＳＳＯ ｏｎ ｓｔａｒｔｅｒ？") == "SSO on starter?"
    assert plain_characters("how do i conﬁgure sso") == "how do i configure sso"
    assert plain_characters("refund\u00a0window\u202fpolicy") == "refund window policy"
    assert plain_characters("refund\u200b window\ufeff") == "refund window"
    assert plain_characters("E\u20134412 and pre\u2011approval for 10\u201325%") == "E-4412 and pre-approval for 10-25%"


def test_what_is_not_a_stand_in_for_a_plain_character_stays():
    # An em dash between words parts a sentence; spaced dashes, currency signs and letters of other scripts stay.
    for text in ("refund\u2014what about business", "refund \u2013 thanks", "€50 or ¥500", "café straße", "β-cell"):
        assert plain_characters(text) == text
    assert plain_characters("how long are invoices kept?") == "how long are invoices kept?"


def test_a_cjk_input_method_s_sentence_marks_end_a_question():
    assert separate_questions("how long are invoices kept？ａｎｄ what is the refund window？") == [
        "how long are invoices kept?",
        "what is the refund window?",
    ]
    assert plain_characters("kept？\n") == "kept?\n"


def test_every_labelled_train_and_dev_question_typed_another_way_reads_as_itself():
    """The property the gateway and the generator rely on: typed full width, with no-break spaces, a zero-width
    space pasted in or a word processor's dashes, each train/dev question reads as when typed plainly (mesh,
    train+dev: full width 0.000 right, no-break spaces 0.790, zero-width 0.810, en dashes 0.664; plainly 0.818)."""
    from services.evaluation.cases import load_cases

    questions = [c.question for c in load_cases("eval/cases/sample.jsonl", ["examples"]) if c.split in ("train", "dev")]
    assert len(questions) > 300
    typed = (
        _full_width,
        lambda q: q.replace(" ", "\u00a0"),
        lambda q: q.replace(" ", " \u200b", 1),
        lambda q: re.sub(r"(?<=\w)-(?=\w)", "\u2013", q),
    )
    for question in questions:
        for way in typed:
            assert without_chatter(way(question)) == without_chatter(question), (question, way(question))
