"""Opening an Office Open XML package (DOCX, PPTX, XLSX) with its library: whatever the library raises on a file it
cannot read fails that document alone, with a message naming it."""

import io
import zipfile
from collections.abc import Callable
from typing import TypeVar

from shared.errors import InvalidArgument

T = TypeVar("T")


def open_package(
    opener: Callable[[io.BytesIO], T], content: bytes, name: str, label: str, expected: tuple[type[Exception], ...]
) -> T:
    """`opener` on the bytes; `expected` are the library's own errors for a file that is not one of its kind."""
    unreadable: tuple[type[Exception], ...] = (*expected, zipfile.BadZipFile, KeyError, ValueError, OSError)
    try:
        return opener(io.BytesIO(content))
    except unreadable as exc:
        raise InvalidArgument(
            "document.content", f"{name} is not a readable {label} ({exc or type(exc).__name__})"
        ) from None
    except Exception as exc:  # noqa: BLE001 - lxml and friends: a broken part fails this document only
        raise InvalidArgument(
            "document.content", f"{name} is not a readable {label} ({type(exc).__name__}: {exc})"
        ) from None
