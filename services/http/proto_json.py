"""The gateway's messages as JSON, and as pydantic models for the OpenAPI document, both read off the
message descriptors, so the HTTP schema is the proto's and cannot drift from it.

Field names are the proto names; every field is present (zeros, empty strings and lists included);
enums are their names; bytes are base64; a float that is not finite (a unit similarity without a view
is NaN) is null, since JSON has no NaN.
"""

import base64
import functools
import math
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, create_model

_SCALARS: dict[int, Any] = {
    FieldDescriptor.TYPE_STRING: str,
    FieldDescriptor.TYPE_BOOL: bool,
    FieldDescriptor.TYPE_INT32: int,
    FieldDescriptor.TYPE_SINT32: int,
    FieldDescriptor.TYPE_UINT32: int,
    FieldDescriptor.TYPE_INT64: int,
    FieldDescriptor.TYPE_SINT64: int,
    FieldDescriptor.TYPE_UINT64: int,
    FieldDescriptor.TYPE_FIXED32: int,
    FieldDescriptor.TYPE_FIXED64: int,
    FieldDescriptor.TYPE_SFIXED32: int,
    FieldDescriptor.TYPE_SFIXED64: int,
    FieldDescriptor.TYPE_BYTES: str,
    FieldDescriptor.TYPE_ENUM: str,
    FieldDescriptor.TYPE_FLOAT: float | None,
    FieldDescriptor.TYPE_DOUBLE: float | None,
}
_FLOATS = (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE)


def _is_repeated(field: FieldDescriptor) -> bool:
    # protobuf 6 has `is_repeated` and deprecates `label`; protobuf 5 has only `label`.
    repeated = getattr(field, "is_repeated", None)
    if repeated is None:
        return field.label == FieldDescriptor.LABEL_REPEATED
    return bool(repeated() if callable(repeated) else repeated)


def _value(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return to_json(value)
    if field.type == FieldDescriptor.TYPE_ENUM:
        named = field.enum_type.values_by_number.get(value)
        return named.name if named else str(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    if field.type in _FLOATS:
        if not math.isfinite(value):
            return None
        # float32 fields widen to long doubles in Python; 7 significant digits is what they hold.
        return float(f"{value:.7g}") if field.type == FieldDescriptor.TYPE_FLOAT else value
    return value


def to_json(message: Message) -> dict[str, Any]:
    """Every field of the message under its proto name."""
    out: dict[str, Any] = {}
    for field in message.DESCRIPTOR.fields:
        value = getattr(message, field.name)
        out[field.name] = [_value(field, v) for v in value] if _is_repeated(field) else _value(field, value)
    return out


@functools.cache
def model_for(descriptor: Descriptor) -> type[BaseModel]:
    """A pydantic model with the message's fields (nested messages become nested models)."""
    fields: dict[str, Any] = {}
    for field in descriptor.fields:
        kind = model_for(field.message_type) if field.type == FieldDescriptor.TYPE_MESSAGE else _SCALARS[field.type]
        fields[field.name] = (list[kind], ...) if _is_repeated(field) else (kind, ...)  # type: ignore[valid-type]
    return create_model(descriptor.name, __config__=ConfigDict(extra="forbid"), **fields)
