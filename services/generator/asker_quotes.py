"""What the asker quotes from the documents: 'The MSA says "Customer will pay the fees stated in the Order Form" -
does that include taxes?'.

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


def quoted_passages(quote: str, passages: list[ScoredChunk]) -> list[ScoredChunk]:
    """The passages whose text holds the quote, up to case, spacing and punctuation."""
    wanted = _plain(quote)
    return [p for p in passages if wanted and wanted in _plain(p.chunk.body)]


def _plain(text: str) -> str:
    return _NON_WORD.sub(" ", text.lower()).strip()
