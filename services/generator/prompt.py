"""The grounded-answer prompt and the JSON contract an LLM must answer in.

Passages enter the prompt with short ids (P1, P2, ...) that small models copy reliably; the
generator maps them back to chunk ids. An id the model invents stays as it is, so the gateway's
citation check rejects the answer.
"""

import json

from shared.model import ScoredChunk
from shared.text import heading_prefix

# Bounded strings: with constrained decoding a small model that rambles is cut off inside valid
# JSON instead of running out of tokens mid-string (which would be unparseable).
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 300},
        "citations": {"type": "array", "items": {"type": "string", "pattern": "^P[0-9]{1,2}$"}, "maxItems": 5},
        "not_in_context": {"type": "boolean"},
        "missing": {"type": "string", "maxLength": 200},
    },
    "required": ["answer", "citations", "not_in_context", "missing"],
}

SYSTEM = (
    "You answer questions using ONLY the numbered passages provided. "
    'Cite the id of every passage you use (for example "P1"). '
    "If the passages do not contain the answer, set not_in_context to true, leave answer empty, "
    "and say in missing what information is absent. Never use outside knowledge. "
    'Reply with JSON only: {"answer": str, "citations": [ids], "not_in_context": bool, "missing": str}.'
)


def prompt_context(passage: ScoredChunk, section_token_budget: int) -> str:
    """Retrieve small, pass large: the enclosing section when it fits the budget, else the chunk."""
    chunk = passage.chunk
    section = chunk.section_text
    if section and chunk.body and chunk.token_count:
        estimated = chunk.token_count * len(section) / max(len(chunk.body), 1)
        if estimated <= section_token_budget:
            return section
    return chunk.body


def build_messages(question: str, passages: list[ScoredChunk], section_token_budget: int) -> tuple[list, dict]:
    """(chat messages, passage id -> chunk id)."""
    ids, blocks = {}, []
    for i, passage in enumerate(passages, start=1):
        pid = f"P{i}"
        ids[pid] = passage.chunk.chunk_id
        title = heading_prefix(passage.chunk.meta.title, passage.chunk.heading_path)
        blocks.append(f"[{pid}] {title}\n{prompt_context(passage, section_token_budget)}")
    user = "Passages:\n\n" + "\n\n".join(blocks) + f"\n\nQuestion: {question}\nJSON answer:"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}], ids


def parse_reply(text: str) -> dict:
    """The model's JSON object; raises ValueError when it is not one in the contract's shape."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the model output")
    data = json.loads(text[start : end + 1])
    if not isinstance(data, dict) or not isinstance(data.get("citations", []), list):
        raise ValueError("model output is not an object with a citations list")
    return data
