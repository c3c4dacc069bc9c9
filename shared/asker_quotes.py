"""What the asker quotes from the documents: 'The MSA says "Customer will pay the fees stated in the Order Form" -
does that include taxes?', or a paragraph pasted from one above the question ("Here's what the travel policy says:
... So can I expense a gym membership?").

The quote says where the asker read; the rest of the message says what they ask about it. Read as one question, the
quote's words were all but the whole question, and the unit it was copied from covered them: of ten such messages
in the demo mesh, six were answered by echoing the quote or by another document's sentence sharing a word of the
rest ("taxes", "contractors", "exchange rate"), none of which the quoted document says anything about. So a quote
found in a passage anchors the answer to that passage's document, and the question asked of it is the rest; a rest
that asks nothing of its own ("is that still true?") keeps the whole message as the question.
"""

import dataclasses
import re

from shared.model import ScoredChunk
from shared.story import FIRST_PERSON_WORDS, follows_up
from shared.text import content_terms, question_terms, sentence_spans

# A quoted span of four words or more, in straight or curly double quotes, or quoted lines ("> ..." as mail and
# Markdown quote): shorter ones are names or error messages ('"E-4412 conflict"'), which the question asks about as
# they are.
_QUOTE = re.compile(r"[\"“”]([^\"“”\n]+?)[\"“”]|((?:^[ \t]*>[^\n]*(?:\n|$))+)", re.MULTILINE)
_QUOTE_MARK = re.compile(r"^[ \t]*>[ \t]?", re.MULTILINE)
_MIN_QUOTE_WORDS = 4
# How the asker says where they read it, before the quote: "The MSA says", "In the refund policy it says", "According
# to the DPA,", "Docs:", "re:". The quote's document is where the answer comes from, so this says nothing more.
_SOURCE = re.compile(
    r"(?:^|(?<=[.?!]\s))[^.?!]*?(?:\b(?:says?|said|states?|stated|reads?|mentions?|writes?|wrote)|\baccording\s+to\b"
    r"[^,.?!]*,?|^[\w\s-]{0,30}:)\s*$",
    re.IGNORECASE,
)
# What is left at the quote's place after it: " - ", ": ", a lone comma or full stop.
_AFTER = re.compile(r"^[\s\-–—:,.;]+")
_NON_WORD = re.compile(r"\W+")
_FIRST_PERSON = re.compile(rf"\b(?:{FIRST_PERSON_WORDS})\b", re.IGNORECASE)  # the asker's words (shared.story)
# Words that ask whether a quote holds ("is that still true?", "is this correct?"): nothing of their own to look for.
_CHECKING = frozenset(content_terms("true correct right accurate valid current still up to date"))
# A sentence pasted from a passage, unquoted, is found in it as written: long enough that a question of the asker's own
# is not (a FAQ's heading asked as it is stays the question: nothing else is left).
_MIN_PASTED_WORDS = 8
# A line introducing what was pasted: "Here's what the travel policy says:", "I read this:".
_INTRO = re.compile(r"^[^\n.?!]{0,80}:\s*$")


@dataclasses.dataclass(frozen=True)
class AskerQuote:
    quote: str  # the quoted words, as written
    rest: str  # the message without the quote and the words saying where it was read


def asker_quote(message: str) -> AskerQuote | None:
    """The first quote of four words or more in the message, and the rest of it; None when there is none."""
    for found in _QUOTE.finditer(message):
        quote = found.group(1) or _QUOTE_MARK.sub("", found.group(2)).strip()
        if len(quote.split()) >= _MIN_QUOTE_WORDS:
            before = _SOURCE.sub("", message[: found.start()])
            rest = " ".join(f"{before} {_AFTER.sub('', message[found.end() :])}".split())
            return AskerQuote(quote, rest)
    return None


def asks_of_its_own(rest: str) -> bool:
    """Whether what is asked of a quote asks something to look for by itself: not only whether the quote holds ("is
    that still true?"), nor a follow-up of it ("what about Business?", which asks the quote's question of another
    thing)."""
    return bool(question_terms(rest) - _CHECKING) and not follows_up(rest)


def quoted_passages(quote: str, passages: list[ScoredChunk]) -> list[ScoredChunk]:
    """The passages whose text holds the quote, up to case, spacing and punctuation."""
    wanted = _plain(quote)
    return [p for p in passages if wanted and wanted in _plain(p.chunk.body)]


def _plain(text: str) -> str:
    return _NON_WORD.sub(" ", text.lower()).strip()


def may_hold_paste(message: str, but_the_askers: bool = False) -> bool:
    """Whether a message could hold a sentence pasted above its question (pasted_quote): two sentences at least, one
    of them as long as a pasted one must be; with `but_the_askers`, one that is not in the first person either ("My
    manager asked me this morning and I couldn't find it.": the asker's own telling, which a ticket pasted whole can
    be too). Read before looking for the paste costs a search."""
    sentences = [line[start:end] for line in message.splitlines() for start, end in sentence_spans(line)]
    return len(sentences) > 1 and any(
        len(_plain(s).split()) >= _MIN_PASTED_WORDS and not (but_the_askers and _FIRST_PERSON.search(s))
        for s in sentences
    )


def pasted_quote(message: str, passages: list[ScoredChunk]) -> tuple[AskerQuote, list[ScoredChunk]] | None:
    """The sentences of the message found as written in a passage (eight words or more each, or any sentence on a
    line with such a one: "Usage-based charges are not refundable.", or a ticket's "Can we still get them?" in a
    pasted paragraph), the rest of it, and the passages they were found in; None when there are none, or nothing
    else is left."""
    plain = [_plain(p.chunk.body) for p in passages]
    pasted: list[str] = []
    rest: list[str] = []  # by line: the asker's lines keep their breaks (a list of questions stays one)
    found_in: set[int] = set()
    for line in message.splitlines():
        sentences = [line[start:end] for start, end in sentence_spans(line)]
        words = [_plain(s) for s in sentences]
        found = [{i for i, body in enumerate(plain) if w and w in body} for w in words]
        long_found = [bool(f) and len(w.split()) >= _MIN_PASTED_WORDS for w, f in zip(words, found, strict=True)]
        own: list[str] = []
        for sentence, where, long in zip(sentences, found, long_found, strict=True):
            is_pasted = long or (any(long_found) and bool(where))
            (pasted if is_pasted else own).append(sentence)
            found_in |= where if is_pasted else set()
        if own and not _INTRO.match(" ".join(own)):
            rest.append(" ".join(own))
    if not pasted or not rest:
        return None
    quote = AskerQuote(" ".join(pasted), "\n".join(rest))
    return quote, [passages[i] for i in sorted(found_in)]
