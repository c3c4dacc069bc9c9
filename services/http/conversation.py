"""The question a chat conversation asks: its last user message, read with the question before it when it only
follows that one up.

A chat client sends the whole conversation, and users ask follow-ups that lean on the turn before: "what is the
consumer refund window" then "and for business customers?" or "how do i fix it?". Asked alone, such a message
names too little to retrieve by ("business customers" matched a ticket's header), so it is asked as one question
in two parts with the one it follows ("what is the consumer refund window; for business customers?"), which the
funnel answers part by part. Only a message that leans on the one before is read this way: one opening with "and",
"also", "what about" ... that names at most two things (four if it also refers back), or one that refers back
("it", "that", "them") and names at most two. "and what about the parental leave policy" names a topic of its own
and is asked alone. (The chat door also asks a follow-up alone when its composed question is refused.)

A follow-up that only swaps what the question before asks about is that question about it, asked alone: "who
approves a 3000 refund", "and 200?" asks who approves a 200 refund (composed, "200?" was answered with "more than 200
seats"); "how much is the team plan", "what about the enterprise plan?" asks how much the enterprise plan is.
"""

import re

from shared.quantities import amounts
from shared.text import BARE_NEGATIONS, STOPWORDS, content_terms

# How a follow-up opens; what comes after it is what it adds to the question before.
_OPENER = re.compile(
    r"^\s*(?:(?:and|but|or)\s+)?(?:what|how)\s+about\s+|^\s*(?:and|also|plus|but|or|same\s+(?:for|with))\b[\s,]*",
    re.IGNORECASE,
)
# Not a possessive stressing whose a thing is ("can customers delete their own stuff"): that names its owner in the
# message, and its "own" is no word of the question's (shared.text).
_REFERS_BACK = re.compile(r"\b(?:it|its|that|this|they|them|their|those|these)\b(?!\s+own\b)", re.IGNORECASE)
# How many things a follow-up may name and still lean on the question before: after an opener, two ("and for
# business customers?"), or four when it also refers back ("and which cli command fixes it?"); without an opener,
# two when it refers back ("how long does it take?"). Of the 464 labelled questions, each asked on its own, none
# reads as a follow-up by these; three would with three words referring back ("nonprofit discount how much and
# can it stack", where "it" is the discount).
_MAX_TERMS_AFTER_OPENER = 2
_MAX_TERMS_AFTER_OPENER_REFERRING_BACK = 4
_MAX_TERMS_REFERRING_BACK = 2
# A composed question stays short: only the one question before is read, and only when it is itself short.
_MAX_EARLIER_CHARS = 500


# A negation says something of its own ("we don't like our consultant, can we swap them"), as a word naming a thing
# does; it is no content term (shared.text), so it is counted here.
_NEGATION = re.compile(rf"\b(?:not|never|\w+n['’]t|wont|{'|'.join(sorted(BARE_NEGATIONS))})\b", re.IGNORECASE)


def _things_named(text: str) -> int:
    return len(content_terms(text)) + bool(_NEGATION.search(text))


def follow_up_rest(message: str) -> str | None:
    """What a follow-up adds to the question before it ("for business customers?", "how do i fix it?"), or None
    when the message is a question of its own."""
    refers_back = bool(_REFERS_BACK.search(message))
    opener = _OPENER.match(message)
    if opener:
        rest = message[opener.end() :].strip()
        limit = _MAX_TERMS_AFTER_OPENER_REFERRING_BACK if refers_back else _MAX_TERMS_AFTER_OPENER
        return rest if rest and _things_named(rest) <= limit else None
    if refers_back and _things_named(message) <= _MAX_TERMS_REFERRING_BACK:
        return message.strip()
    return None


def _with_amount_replaced(earlier: str, rest: str) -> str | None:
    """The earlier question asking about the follow-up's amount instead of its own: "who approves a 3000 refund",
    "and 200?" asks who approves a 200 refund, not about 200 seats. Only where the follow-up names nothing but the
    amount (and its unit), the earlier question names one amount, and their units agree (or the follow-up's number
    has none)."""
    added, before = amounts(rest), amounts(earlier)
    if len(added) != 1 or len(before) != 1:
        return None
    new, old = added[0], before[0]
    if content_terms(rest[: new.start] + rest[new.end :]) - {old.unit, new.unit}:
        return None  # it names something besides the amount: "and 200 seats on business?"
    if new.unit and new.unit != old.unit and not {new.unit, old.unit} <= _MONEY:
        return None  # "2 weeks" is no "6 months"
    return earlier[: old.start] + rest[new.start : new.end] + earlier[old.end :]


_MONEY = frozenset({"$", "€", "£", "¤"})
_WORD = re.compile(r"[\w'-]+")


def _with_thing_replaced(earlier: str, rest: str) -> str | None:
    """The earlier question asking about the follow-up's thing instead of the one of its kind it names: "how much is
    the team plan", "what about the enterprise plan?" asks how much the enterprise plan is. Only where the follow-up
    is two or three words naming a thing by a word the earlier question names its own by, once ("plan"); the words
    before it there ("team") are what the follow-up's replace."""
    words = _WORD.findall(rest)
    while words and words[0].lower() in _LEADING:
        words = words[1:]
    if not 2 <= len(words) <= 3 or any(w.lower() in STOPWORDS for w in words):
        return None
    head = content_terms(words[-1])
    found = [m for m in _WORD.finditer(earlier) if head and content_terms(m.group()) == head]
    if len(found) != 1:
        return None
    start, end = found[0].span()
    # The words just before it that qualify it ("team" in "the team plan"), up to a small word or a mark.
    for m in reversed(list(_WORD.finditer(earlier[:start]))):
        if m.group().lower() in STOPWORDS or earlier[m.end() : start].strip():
            break
        start = m.start()
    replaced = earlier[:start] + " ".join(words) + earlier[end:]
    return replaced if content_terms(replaced) != content_terms(earlier) else None


# Words a follow-up opens with before the thing it names ("for the business plan?").
_LEADING = frozenset({"and", "for", "the", "on", "in", "with", "about", "a", "an"})


def standalone_question(user_messages: list[str]) -> str:
    """The question to ask for the last of the user's messages (in conversation order): the message itself, or,
    when it follows up an earlier one, both as one question in two parts. A chain of follow-ups reads back to the
    question that started it: after "refund window for consumers", "and for business?", the message "and for
    annual plans?" asks about the refund window of annual plans, not of business ones too."""
    question = user_messages[-1].strip()
    rest = follow_up_rest(question)
    then = ""
    if rest is None:
        # A follow-up, then a question of its own: "and for business customers? also, who approves a $3000 refund?"
        # asks the first with the question before it, and the second on its own line (the gateway answers each).
        first, mark, then = question.partition("?")
        rest = follow_up_rest(first + mark) if mark and then.strip() and follow_up_rest(then) is None else None
        if rest is None:
            return question
    for earlier in reversed(user_messages[:-1]):
        earlier = earlier.strip()
        if earlier and follow_up_rest(earlier) is None:
            if len(earlier) > _MAX_EARLIER_CHARS:
                break
            # "and 200?", "what about the enterprise plan?": the earlier question about that one, asked alone.
            replaced = _with_amount_replaced(earlier, rest) or _with_thing_replaced(earlier, rest)
            composed = replaced or f"{earlier.rstrip(' ?.!;')}; {rest}"
            return f"{composed}\n{then.strip()}" if then.strip() else composed
    return question
