"""What a tenant id and an access scope name may be: short identifiers, so neither can carry a
payload into logs, file names or the answer log, and a misread list (`[hr`) is refused, not filed."""

import re
import unicodedata

from shared.errors import InvalidArgument

MAX_TENANT_ID = 64
TENANT_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_TENANT_ID - 1}}}")
SCOPE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}")
# A document id is a path-like name (`handbook/refunds`, a file's path) and a version a short label; neither may
# hold a control character or a line break, which would forge lines in logs and break `id@version` output.
MAX_DOCUMENT_ID = 512
MAX_VERSION = 128
# A key holding this scope reads every scope of its tenant (local development keys).
ALL_SCOPES = "*"


def check_tenant_id(tenant_id: str, field: str = "tenant_id") -> str:
    if not tenant_id:
        raise InvalidArgument(field, "is required")
    if not TENANT_ID.fullmatch(tenant_id):
        shown = tenant_id if len(tenant_id) <= 80 else f"{tenant_id[:80]}... ({len(tenant_id)} characters)"
        raise InvalidArgument(
            field,
            f"{shown!r} is not a tenant id (up to {MAX_TENANT_ID} letters, digits "
            "and . _ -, starting with a letter or digit)",
        )
    return tenant_id


def check_document_name(value: str, field: str, name: str, limit: int) -> str:
    """A document id or version as stated: at most `limit` characters, no control characters or line breaks.
    `name` names the document in the error."""
    if len(value) > limit:
        raise InvalidArgument(field, f"{name}: {len(value)} characters, over the limit of {limit}")
    # Control characters and line/paragraph separators; format characters stay (Persian names hold a ZWNJ).
    bad = next((ch for ch in value if unicodedata.category(ch) in ("Cc", "Zl", "Zp")), None)
    if bad is not None:
        raise InvalidArgument(
            field, f"{name}: {value[:80]!r} holds the control character U+{ord(bad):04X} (line breaks included)"
        )
    return value
