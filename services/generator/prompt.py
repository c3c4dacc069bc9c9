"""The grounded-answer prompt and the JSON contract an LLM must answer in.

The model reads the answer units the extractive generator would choose from (sentences, list items, table
rows with their header, code lines), each under its section path and with a short id (U1, U2, ...) that
small models copy reliably; it cites unit ids, and the generator maps each back to the unit's chunk and
character span. An id the model invents stays as it is, so the gateway's citation check rejects the answer.
"""

import json

from services.generator.selection import UnitCandidate

# Bounded strings: with constrained decoding a small model that rambles is cut off inside valid
# JSON instead of running out of tokens mid-string (which would be unparseable).
ANSWER_SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "maxLength": 300},
        # At least one unit (an answer without one is refused anyway), at most three: given room for five, a
        # small model listed U1..U5 in order whatever they said.
        "citations": {
            "type": "array",
            "items": {"type": "string", "pattern": "^U[0-9]{1,2}$"},
            "minItems": 1,
            "maxItems": 3,
        },
        "not_in_context": {"type": "boolean"},
        "missing": {"type": "string", "maxLength": 200},
    },
    "required": ["answer", "citations", "not_in_context", "missing"],
}

SYSTEM = (
    "You answer questions using ONLY the numbered evidence units provided; each is a sentence, list item, "
    "table row or line quoted from a document, after its section. "
    'Cite the id of every unit your answer uses (for example "U1"). '
    "If the units do not contain the answer, set not_in_context to true, leave answer empty, "
    "and say in missing what information is absent. Never use outside knowledge. "
    'Reply with JSON only: {"answer": str, "citations": [ids], "not_in_context": bool, "missing": str}.'
)


def build_messages(question: str, units: list[UnitCandidate]) -> tuple[list[dict], dict[str, UnitCandidate]]:
    """(chat messages, unit id -> unit). Each unit is one line: its id, then the unit read under its section
    path (selection.UnitCandidate.text, what the support reader reads too)."""
    ids = {f"U{n}": unit for n, unit in enumerate(units, start=1)}
    lines = [f"[{uid}] {unit.text}" for uid, unit in ids.items()]
    user = "Evidence units:\n\n" + "\n".join(lines) + f"\n\nQuestion: {question}\nJSON answer:"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}], ids


def parse_reply(text: str) -> dict:
    """The model's JSON object; raises ValueError when it is not one in the contract's shape."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the model output")
    # strict=False: a raw newline or tab inside a string is read as itself. Small models write them even under a
    # JSON grammar (seen: SmolLM2 through llama.cpp's server, "Invalid control character"), and they change
    # nothing the contract checks.
    data = json.loads(text[start : end + 1], strict=False)
    if not isinstance(data, dict) or not isinstance(data.get("citations", []), list):
        raise ValueError("model output is not an object with a citations list")
    return data
