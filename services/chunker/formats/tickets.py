"""A ticket thread as JSON -> canonical text: one section per message, like a plain-text thread.

Accepted shapes: a list of messages, or an object with a "messages" list (and optionally a
"subject"/"title" for the thread). A message is {"from", "date", "subject"?, "body"}. Each message is
written as an e-mail: its From/Date/Subject header lines, then its body paragraphs, so the canonical
text reads like the .txt threads and evidence can be quoted from either.
"""

from services.chunker.formats.canonical import CanonicalWriter
from services.chunker.formats.text import read_json
from services.chunker.frontmatter import KNOWN_KEYS, access_like_paths
from services.chunker.structure import ParsedDocument
from shared.errors import InvalidArgument
from shared.text import message_heading


def _messages(data, name: str) -> tuple[str, list[dict]]:
    title = ""
    if isinstance(data, dict):
        title = str(data.get("title") or data.get("subject") or "")
        data = data.get("messages")
    if not isinstance(data, list) or not data:
        raise InvalidArgument(
            "document.content", f"{name} is not a ticket thread (expected a non-empty list of messages)"
        )
    for i, message in enumerate(data, start=1):
        if not isinstance(message, dict):
            raise InvalidArgument("document.content", f"{name}: message {i} is not an object")
        for key in ("from", "body"):
            if not isinstance(message.get(key), str) or not message[key].strip():
                raise InvalidArgument("document.content", f"{name}: message {i} has no {key!r} text")
    return title, data


def parse_ticket_json(content: bytes, name: str) -> ParsedDocument:
    data = read_json(content, name, "application/json")
    title, messages = _messages(data, name)
    # A thread object may state governance as front matter does; keys about access anywhere in it (a message's
    # `public: false`) refuse a thread nobody gave scopes, as in front matter (services/chunker/frontmatter.py).
    fields: dict[str, object] = {}
    if isinstance(data, dict):
        fields = {
            k.strip().lower(): v for k, v in data.items() if isinstance(k, str) and k.strip().lower() in KNOWN_KEYS
        }
    writer = CanonicalWriter()
    if title:
        writer.heading(1, title)
    for number, message in enumerate(messages, start=1):
        sender = " ".join(message["from"].split())
        writer.section(message_heading(number, sender), level=2 if title else 1)
        header = [f"From: {sender}"]
        header += [
            f"{label}: {message[key]}"
            for key, label in (("date", "Date"), ("subject", "Subject"))
            if isinstance(message.get(key), str) and message[key].strip()
        ]
        writer.header("\n".join(header))
        for paragraph in message["body"].replace("\r\n", "\n").split("\n\n"):
            writer.paragraph(paragraph)
    subject = next((m["subject"] for m in messages if isinstance(m.get("subject"), str) and m["subject"].strip()), "")
    parsed = writer.result(title=title or subject.strip())
    parsed.fields = fields
    parsed.access_like = access_like_paths(data)
    return parsed
