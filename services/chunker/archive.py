"""Zip-based formats (DOCX) are checked before they are opened: a small file must not expand into a
huge one. The document size limit applies to the bytes sent, so the expansion needs its own bound."""

import io
import zipfile

from shared.errors import ResourceExhausted

ZIP_MAGIC = b"PK\x03\x04"
# Times the document size limit the members may expand to (XML, styles and media of a DOCX are
# verbose: the sample contract's 36 KB expand to 830 KB), and the largest compression ratio of a member
# over 1 MiB (ordinary DOCX parts stay under ~50; a zip bomb is in the thousands).
EXPANSION_FACTOR = 10
MAX_RATIO = 200


def check_archive(content: bytes, name: str, max_bytes: int) -> None:
    if not content.startswith(ZIP_MAGIC):
        return
    try:
        members = zipfile.ZipFile(io.BytesIO(content)).infolist()
    except zipfile.BadZipFile:
        return  # the format's parser says what is wrong with it
    total = sum(m.file_size for m in members)
    limit = EXPANSION_FACTOR * max_bytes
    if total > limit:
        raise ResourceExhausted(
            f"document.content: {name} expands to {total} bytes, over the {limit}-byte limit "
            f"for archives ({EXPANSION_FACTOR}x the {max_bytes}-byte document limit, RAGMESH_CHUNKER_MAX_BYTES)"
        )
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > 1 << 20 and ratio > MAX_RATIO:
            raise ResourceExhausted(
                f"document.content: {name} member {member.filename!r} expands {ratio:.0f}x, "
                f"over the limit of {MAX_RATIO}x"
            )
