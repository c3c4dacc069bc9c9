"""An e-mail message (.eml, RFC 5322 with MIME; the stdlib's email package) -> canonical text, read as a one-message
ticket thread: the subject as the title, a section for the message whose text starts with its From/To/Cc/Date/
Subject lines, then its body. The body is the plain-text part, or the HTML part read as an HTML page where there is
no plain one; attachments are named (their content is not read: ingest them as files of their own)."""

import email
import email.policy
from email.errors import MessageError
from email.message import EmailMessage, MIMEPart

from services.chunker.formats.canonical import CanonicalWriter
from services.chunker.formats.html import parse_html
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument
from shared.text import message_heading

_HEADER_LINES = ("From", "To", "Cc", "Date", "Subject")


def _text(part: MIMEPart) -> str:
    """A text part's content; an unknown or wrong charset is read as UTF-8 with replacement characters rather
    than failing the message."""
    try:
        return part.get_content()
    except (LookupError, UnicodeDecodeError):
        payload = part.get_payload(decode=True)
        return payload.decode("utf-8", errors="replace") if isinstance(payload, bytes) else ""


def _body(message: EmailMessage, name: str) -> list[str]:
    """The body's paragraphs."""
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return []
    if part.get_content_subtype() == "html":
        html = _text(part).encode("utf-8")
        try:
            return parse_html(html, name).text.split("\n\n")
        except InvalidArgument:
            return []
    return _text(part).replace("\r\n", "\n").split("\n\n")


def parse_eml(content: bytes, name: str) -> ParsedDocument:
    if b"\x00" in content[:8192]:
        raise InvalidArgument("document.content", f"{name} looks binary (NUL bytes), not an e-mail message")
    message = email.message_from_bytes(content, policy=email.policy.default)  # an EmailMessage, by the policy
    try:
        header = {key: " ".join(str(message[key]).split()) for key in _HEADER_LINES if message[key]}
        paragraphs = [p for p in _body(message, name) if p.strip()]
        attachments = [part.get_filename() or "unnamed" for part in message.iter_attachments()]
    except (MessageError, ValueError, LookupError, TypeError) as exc:  # a header or MIME part that does not parse
        raise InvalidArgument("document.content", f"{name} is not a readable e-mail message ({exc})") from None
    if "From" not in header and "Subject" not in header:
        raise InvalidArgument("document.content", f"{name} is not an e-mail message (no From or Subject header)")
    if not paragraphs and not attachments:
        raise InvalidArgument("document.content", f"{name} has no readable text (an e-mail without a body)")
    subject = header.get("Subject", "")
    writer = CanonicalWriter()
    if subject:
        writer.heading(1, subject)
    writer.section(message_heading(1, header.get("From", "unknown sender")), level=2 if subject else 1)
    lines = [f"{key}: {value}" for key, value in header.items()]
    if attachments:
        lines.append(f"Attachments: {', '.join(attachments)}")
    writer.header("\n".join(lines))
    for paragraph in paragraphs:
        writer.paragraph(paragraph)
    return writer.result(title=subject)
