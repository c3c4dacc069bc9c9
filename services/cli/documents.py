"""Files on disk -> SourceDocuments for the gateway's Ingest."""

import os
from pathlib import Path

from ragmesh.client import document
from services.chunker.content_types import EXTENSIONS
from shared.stubs import common_pb2


def collect_files(paths: list[str], skipped: list[str] | None = None) -> list[tuple[Path, str]]:
    """(file, source uri) pairs; for a folder the uri is the path relative to it, so document ids
    do not depend on where the folder lives. Hidden files are skipped, and so are a folder's files of a type
    no parser reads (by extension: a Markdown folder's images), whose uris go to `skipped`: one diagram
    must not fail an ingest, nor stop a sync from erasing. A file named on its own is always sent."""
    found = []
    for raw in paths:
        root = Path(raw)
        if root.is_file():
            found.append((root, root.name))
        elif root.is_dir():
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if name.startswith("."):
                        continue
                    path = Path(dirpath) / name
                    if os.path.splitext(name)[1].lower() not in EXTENSIONS:
                        if skipped is not None:
                            skipped.append(path.relative_to(root).as_posix())
                        continue
                    found.append((path, path.relative_to(root).as_posix()))
        else:
            raise FileNotFoundError(f"no such file or folder: {raw}")
    return found


def skipped_line(skipped: list[str], shown: int = 5) -> str:
    """What a run says of the files it left out ("" when none)."""
    if not skipped:
        return ""
    names = ", ".join(skipped[:shown]) + (f" and {len(skipped) - shown} more" if len(skipped) > shown else "")
    kinds = sorted(ext.lower() for ext in set(os.path.splitext(uri)[1] or "(no extension)" for uri in skipped))
    return f"skipped {len(skipped)} files of a type no parser reads ({', '.join(kinds)}): {names}"


def to_source_document(path: Path, uri: str) -> common_pb2.SourceDocument:
    return document(path.read_bytes(), uri)
