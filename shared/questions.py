"""The separate questions one message asks: "1) how long are invoices kept 2) what is the hotel cap in london", "how
long are invoices kept? Also, what's the refund window?", a question on each line, or two joined by "and" ("how long
are invoices kept and who approves a $3000 refund?").

Asked as one, such a message is searched and reranked as one question: the passages answering each part score low
against both together (the reranker read 0.69 where the parts alone read 0.83 and 0.76), so the gate refused it, or
the answer quoted one part's passage and a stray one for the other. Each question found here goes through the funnel
on its own (services/gateway/funnel.py).

Only questions that stand alone are parted: each must ask something of its own (two words to look for, or a name
such as E-4412), ask it as a question and not tell the asker's story ("I'm new here."), and not refer back to another
("what about business accounts?", "is it covered?"); two joined by "and" refer to nothing at all ("E-4412 what is it
and which cli command fixes it" asks of one thing). One that does not keeps the message whole, read as before: a
question in parts about one thing ("how big is team storage and what happens when its full") is answered from one
search by the generator (shared.text.question_parts).
"""

import re

from shared.characters import plain_characters
from shared.chatter import (
    FIRST_LIST_MARKER,
    NEXT_LIST_MARKER,
    only_chatter,
    without_chatter,
    without_mail,
    without_sign_off,
)
from shared.pasted import is_log_line
from shared.spelling import english_word
from shared.story import (
    ASKING_WORD,
    FIRST_PERSON_WORDS,
    follows_up,
    opens_question,
    referring_word,
    refers_back,
    told_and_asked,
)
from shared.text import QUESTION_OPENING, identifiers, question_terms

# A line this long that ends without a closing mark may have been wrapped by a mail client (at 72-80 characters); a
# short line is a line of its own ("hotel cap nyc" above "lost my laptop who do i tell").
_WRAPPED = 60
# A wrapped line ends, or the line after it opens, in the middle of a sentence: on a word that joins or leads into
# the next ("... for tax purposes and for how" / "long we keep payroll records").
_MID_SENTENCE_END = re.compile(
    r"(?:,|\b(?:a|an|the|and|or|but|of|to|for|in|on|at|by|with|from|as|than|that|which|how|what|when|where|who|we"
    r"|i|you|they|our|my|your|their|is|are|was|were|be|can|could|should|would|will|do|does|did|not|if|whether|per))$",
    re.IGNORECASE,
)
_MID_SENTENCE_START = re.compile(
    r"^(?:and|or|but|of|to|for|in|on|at|by|with|from|as|than|that|whether|if|per)\b", re.IGNORECASE
)
# A question mark before another question ("... kept? Also, what's ...?"): where the next question starts.
_AFTER_QUESTION_MARK = re.compile(r"(?<=\?)\s+(?=\S)")
# "and" before a question's opening word: where a second question may start ("how long are invoices kept and who
# approves a refund"); split there only when each side asks on its own (_and_parts).
# The words are those after which a question asks a second thing (shared.text.QUESTION_OPENING, "what's" among
# them), with "which", "whats", "whom" and "must".
_AND_ASKS = re.compile(rf",?\s+and\s+(?=(?:{QUESTION_OPENING}|(?:which|whats|whom|must)\b))", re.IGNORECASE)
# Words that join the next question to the one before: "also", "and", "plus", "oh and", "one more:".
_JOINING = re.compile(
    r"^\W*(?:(?:and|also|plus|oh|then|next|secondly|second|lastly|finally|one\s+more(?:\s+thing)?|another\s+one)\b"
    r"[\s,:;.!-]*)+",
    re.IGNORECASE,
)
# A first-person statement or claim ("I thought it was 30?", "we're on the Team plan"): context, not a question,
# unless it asks something ("i want to work from spain for 2 months who approves", "we dont like our consultant can we
# swap them").
_TELLS = re.compile(rf"^\W*(?:{FIRST_PERSON_WORDS})\b", re.IGNORECASE)
# A bullet opening a line ("- ", "* ", "• ").
_BULLET = re.compile(r"^[-*•]\s+")
# A lead-in line closed by a colon ("About travel:", "Two questions on refunds:") names what the questions below ask
# about, when it says more than that there are questions.
_LEAD_IN = re.compile(r":\s*$")


def separate_questions(message: str) -> list[str]:
    """The questions a message asks, each as written (its list marker and joining word left out, a lead-in's topic
    before it); [message] when it asks one, or when a part does not stand alone. Read in plain characters
    (shared.characters): a full-width question mark parts questions as "?" does."""
    message = plain_characters(message)
    topic = ""
    pieces: list[str] = []
    # A reply's quoted thread and a signature are no questions of the message (shared.mail).
    for line in _lines(without_sign_off(without_mail(message))):
        line = FIRST_LIST_MARKER.sub("", _BULLET.sub("", line.strip(), count=1), count=1)
        if only_chatter(line):
            continue
        if not pieces and not topic and _LEAD_IN.search(line):
            topic = without_chatter(line).rstrip(": ")
            continue
        for item in _list_items(line):
            after_marks = [_JOINING.sub("", piece).strip() for piece in _AFTER_QUESTION_MARK.split(item)]
            # After a question mark, only a question asks another ("... kept? Also, what's the refund window?");
            # anything else says more of the one before ("(see https://...)", "We need this for an audit.").
            if not all(_asks(piece) for piece in after_marks[1:] if not only_chatter(piece)):
                after_marks = [item]
            pieces += after_marks
    pieces = [piece for piece in pieces if piece and not only_chatter(piece)]
    # A message that lists its questions asks one in each item; one question may join two with "and".
    if len(pieces) == 1:
        pieces = _and_parts(pieces[0])
    if len(pieces) < 2 or not all(_stands_alone(piece) for piece in pieces):
        return [message]
    if topic and question_terms(topic):
        pieces = [f"{topic}: {piece}" for piece in pieces]
    return pieces


def _lines(message: str) -> list[str]:
    """The message's lines, a line wrapped by a mail client joined to the one it goes on from."""
    lines: list[str] = []
    for line in message.splitlines():
        if not line.strip():
            continue
        if lines and _goes_on(lines[-1].rstrip(), line.strip()):
            lines[-1] = f"{lines[-1].rstrip()} {line.strip()}"
        else:
            lines.append(line.rstrip())
    return lines


def _goes_on(line: str, after: str) -> bool:
    """Whether the line after a long one goes on with its sentence: the long one ends in the middle of it, and the
    one after opens no list item of its own."""
    if len(line) < _WRAPPED or line.endswith(("?", ".", "!", ":")):
        return False
    if _BULLET.match(after) or FIRST_LIST_MARKER.match(after):
        return False
    return bool(_MID_SENTENCE_END.search(line) or _MID_SENTENCE_START.match(after))


def _and_parts(piece: str) -> list[str]:
    """A piece's questions joined by "and": both sides when neither refers to anything ("how big is team storage and
    what happens when its full" asks of one thing), else the piece. Whether each stands alone is asked of every part
    by separate_questions."""
    parts = _AND_ASKS.split(piece, maxsplit=1)
    if len(parts) == 2 and all(referring_word(part) is None for part in parts):
        return parts
    return [piece]


def _list_items(line: str) -> list[str]:
    """A line's list items ("how long are invoices kept 2) what is the hotel cap"), the line when it has none."""
    starts = [0] + [found.start() for found in NEXT_LIST_MARKER.finditer(line)]
    items = [line[start:end] for start, end in zip(starts, starts[1:] + [len(line)], strict=True)]
    return [FIRST_LIST_MARKER.sub("", item.strip(), count=1) for item in items]


def _asks(piece: str) -> bool:
    """Whether a part is written as a question: closed by a question mark or opened by a question's word."""
    asked = without_chatter(piece)
    return asked.rstrip().endswith("?") or opens_question(asked)


def _stands_alone(piece: str) -> bool:
    """Whether a part of a message is a question of its own: it asks something to look for, as a question (or as
    the words to look for: "hotel cap nyc"), and refers to no other part."""
    # A pasted log line says what happened and asks nothing ("2026-12-07 02:00:13,442 ERROR job-runner: E-4501 job
    # exceeded time limit" above "what is the max timeout?" had been answered as a question of its own).
    if is_log_line(piece):
        return False
    asked = without_chatter(piece)
    story, question = told_and_asked(asked)
    tells = _TELLS.match(asked) and not ASKING_WORD.search(asked)
    if not story and (tells or asked.rstrip().endswith((".", "!")) and not opens_question(asked)):
        return False
    if follows_up(question) or refers_back(question):
        return False
    # One word to look for asks too little alone ("what's the fee?" follows a question up) unless it names a thing
    # ("what is nwctl", "E-4412 fix").
    terms = question_terms(question)
    return len(terms) >= 2 or bool(identifiers(question)) or any(not english_word(term) for term in terms)
