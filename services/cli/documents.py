"""Files on disk -> SourceDocuments for the gateway's Ingest."""

import os
from pathlib import Path

from shared.stubs import common_pb2


def collect_files(paths: list[str]) -> list[tuple[Path, str]]:
    """(file, source uri) pairs; for a folder the uri is the path relative to it, so document ids
    do not depend on where the folder lives. Hidden files are skipped."""
    found = []
    for raw in paths:
        root = Path(raw)
        if root.is_file():
            found.append((root, root.name))
        elif root.is_dir():
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
                for name in sorted(filenames):
                    if not name.startswith("."):
                        path = Path(dirpath) / name
                        found.append((path, path.relative_to(root).as_posix()))
        else:
            raise FileNotFoundError(f"no such file or folder: {raw}")
    return found


def to_source_document(path: Path, uri: str) -> common_pb2.SourceDocument:
    return common_pb2.SourceDocument(meta=common_pb2.DocumentMeta(source_uri=uri), content=path.read_bytes())
