"""The parts of a message that a mail client writes: the subject line pasted above the body, what the sender wrote,
the earlier message a reply quotes ("On Mon, 7 Dec 2026, Sam wrote:" above "> ..." lines; Outlook's "-----Original
Message-----" or "From: ... Sent: ..." block) or a forward carries, with its headers, the signature under "--", and
the banners a mail gateway adds ("CAUTION: This email originated from outside the organization", "CONFIDENTIALITY
NOTICE: ...").

quotequail finds the quoted or forwarded message and its headers, in several languages ("Am ... schrieb", "Le ... a
écrit"). What of it is asked is decided by shared.chatter.
"""

import re
import typing

import quotequail

from shared.text import PARAGRAPH_BREAK

# RFC 3676's signature delimiter ("-- " on a line of its own), and "--" as clients without the space write it, with
# what follows it when that asks nothing ("?").
_SIGNATURE = re.compile(r"\n[ \t]*--[ \t]*\n[^?]*\Z")
# A subject line opening the message, pasted with the body under a blank line: "Re: audit figures\n\n...".
_SUBJECT = re.compile(
    r"\A\s*(?:(?:re|fw|fwd|aw|sv|subject)\s*:\s*)+(?P<subject>[^\n]*?)[ \t]*\n[ \t]*\n", re.IGNORECASE
)
# A paragraph a mail gateway or a company's template adds: a confidentiality notice or an external-sender warning.
_BANNER = re.compile(
    r"\b(?:confidential(?:ity)?\s+notice|disclaimer\s*:|intended\s+(?:solely|only)\s+for|(?:originated|came|comes|was\s+sent)"
    r"\s+from\s+(?:an\s+)?(?:outside|external)|external\s+sender|do\s+not\s+click\s+(?:on\s+)?links"
    r"|unless\s+you\s+(?:recogni[sz]e|trust)\s+the\s+sender)",
    re.IGNORECASE,
)
# What every quoted or forwarded message's header quotequail knows holds: a colon ("On ... wrote:", "From: ..."), a
# line of dashes or underscores, or an address in angle brackets. quotequail tries each of its patterns on every
# line (~8 ms for 70 lines), so a message without any of these is not handed to it.
_MAYBE_HEADER = re.compile(r":|-{3,}|_{10,}|<[^<>\n]*@[^<>\n]*>")


class Mail(typing.NamedTuple):
    subject: str  # the subject line pasted above the body; "" when none
    own: str  # what the sender wrote, without a signature
    earlier: str  # the message a reply quotes or a forward carries, without its headers and signature; "" when none


def read_mail(message: str) -> Mail:
    """A message's parts as a mail client writes them; a message without any is its sender's own words."""
    if "\n" not in message:
        return Mail("", message, "")
    subject, text = _subject_and_body(_without_banners(_without_signature(message)))
    unwrapped = quotequail.unwrap(text) if _MAYBE_HEADER.search(text) else None
    if not unwrapped:
        return Mail(subject, text.strip(), "")
    own = unwrapped.get("text_top", "").strip()
    return Mail(subject, own, _without_signature(unwrapped.get("text", "").strip()))


def _without_banners(text: str) -> str:
    """The text without its banner paragraphs; a paragraph that asks something ("?") is the asker's."""
    paragraphs = PARAGRAPH_BREAK.split(text)
    kept = [part for part in paragraphs if "?" in part or not _BANNER.search(part)]
    return text if len(kept) == len(paragraphs) else "\n\n".join(kept)


def _without_signature(text: str) -> str:
    return _SIGNATURE.sub("", text)


def _subject_and_body(text: str) -> tuple[str, str]:
    found = _SUBJECT.match(text)
    if found is None or not text[found.end() :].strip():
        return "", text
    return found["subject"].strip(), text[found.end() :]
