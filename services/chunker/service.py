"""The chunker component: raw bytes + metadata in, chunks with offsets and stable ids out."""

import dataclasses
import hashlib
import os
from pathlib import PurePosixPath

from services.chunker.chunking import SectionPacker, build_chunks
from services.chunker.frontmatter import split_front_matter
from services.chunker.structure import parse_markdown, parse_text
from shared.embedding.tokens import TokenCounter
from shared.errors import InvalidArgument
from shared.model import Chunk, DocumentMeta

PARSERS = {"text/markdown": parse_markdown, "text/plain": parse_text}
EXTENSIONS = {".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain", ".text": "text/plain"}
DEFAULT_EFFECTIVE_FROM = "1970-01-01"


def content_type_for(meta: DocumentMeta) -> str:
    if meta.content_type:
        return meta.content_type.split(";")[0].strip().lower()
    return EXTENSIONS.get(os.path.splitext(meta.source_uri)[1].lower(), "")


class StructureChunker:
    chunker_id = "structure-v1"

    def __init__(self, model_name: str, max_tokens: int = 0, overlap_ratio: float = 0.12,
                 max_bytes: int = 10_000_000):
        self.model_name = model_name
        self.requested_max_tokens = max_tokens
        self.overlap_ratio = overlap_ratio
        self.max_bytes = max_bytes
        self.counter = TokenCounter(model_name)
        self.max_tokens = 0
        self._packer: SectionPacker | None = None

    def warm_up(self) -> None:
        self.counter.warm_up()
        window = self.counter.max_tokens
        # The budget follows the model: never more than its window, so nothing is silently truncated.
        self.max_tokens = min(self.requested_max_tokens or window, window)
        self._packer = SectionPacker(self.counter, self.max_tokens, self.overlap_ratio)

    def run(self, content: bytes, meta: DocumentMeta) -> tuple[DocumentMeta, list[Chunk]]:
        name = meta.document_id or meta.source_uri or "document"
        if not meta.tenant_id:
            raise InvalidArgument("document.meta.tenant_id", f"is required ({name})")
        if len(content) > self.max_bytes:
            raise InvalidArgument("document.content",
                                  f"{name} is {len(content)} bytes, over the {self.max_bytes}-byte limit")
        if not content.strip():
            raise InvalidArgument("document.content", f"{name} is empty")
        content_type = content_type_for(meta)
        parser = PARSERS.get(content_type)
        if parser is None:
            raise InvalidArgument("document.meta.content_type",
                                  f"{name}: unsupported content type {content_type or 'unknown'!r}")
        if b"\x00" in content:
            raise InvalidArgument("document.content", f"{name} looks binary (NUL bytes), not {content_type}")
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidArgument("document.content", f"{name} is not valid UTF-8 (byte {exc.start})") from None
        text = text.removeprefix("\ufeff")
        fields, body_start = split_front_matter(text)
        resolved = self._resolve_meta(meta, fields, content, content_type, text[body_start:])
        if not text[body_start:].strip():
            raise InvalidArgument("document.content", f"{resolved.document_id} has no text after its front matter")
        sections = parser(text, body_start)
        return resolved, build_chunks(text, resolved, sections, self._packer)

    @staticmethod
    def _resolve_meta(meta: DocumentMeta, fields: dict, content: bytes, content_type: str, body: str) -> DocumentMeta:
        """Caller-supplied metadata wins; front matter fills the gaps; then safe defaults."""
        scopes = meta.access_scopes or [s.strip() for s in fields.get("access_scopes", "").split(",") if s.strip()]
        document_id = meta.document_id or fields.get("doc_id") or str(PurePosixPath(meta.source_uri or "document"))
        return dataclasses.replace(
            meta,
            document_id=document_id,
            version=meta.version or fields.get("version") or "1",
            access_scopes=scopes or ["public"],
            effective_from=meta.effective_from or fields.get("effective_from") or DEFAULT_EFFECTIVE_FROM,
            effective_to=meta.effective_to or fields.get("effective_to", ""),
            content_type=content_type,
            title=meta.title or fields.get("title") or _first_heading(body) or PurePosixPath(document_id).stem,
            source_sha256=hashlib.sha256(content).hexdigest(),
        )


def _first_heading(body: str) -> str:
    for line in body.splitlines():
        if line.startswith("# "):
            return line[2:].strip()
        if line.strip():
            return ""
    return ""
