"""The chunker component: raw bytes + metadata in, chunks with offsets and stable ids out.

Validation and metadata are the same for every strategy; the strategy decides where to cut:
"structure" (sections and blocks, chunking.py) or "fixed" (the structure-blind baseline, fixed.py).
"""

import dataclasses
import hashlib
from pathlib import PurePosixPath

from services.chunker.archive import check_archive
from services.chunker.chunking import SectionPacker, build_chunks
from services.chunker.fixed import COMMON_DEFAULT_TOKENS, FixedWindows
from services.chunker.frontmatter import refuse_access_like_keys
from services.chunker.governance import (
    MISSING_SCOPES,
    check_interval,
    date_value,
    default_scopes,
    scope_list,
    text_value,
)
from services.chunker.parsing import content_type_for, parse_document
from services.chunker.structure import ParsedDocument
from services.chunker.supersession import SOURCE_FRONT_MATTER, Statement, infer
from shared.embedding.tokens import TokenCounter
from shared.errors import InvalidArgument, ResourceExhausted
from shared.model import Chunk, DocumentMeta
from shared.names import MAX_DOCUMENT_ID, MAX_VERSION, check_document_name

STRATEGIES = ("structure", "fixed")
DEFAULT_EFFECTIVE_FROM = "1970-01-01"


class DocumentChunker:
    def __init__(
        self,
        model_name: str,
        max_tokens: int = 0,
        overlap_ratio: float = 0.12,
        max_bytes: int = 10_000_000,
        strategy: str = "structure",
        missing_scopes: str = "public",
    ):
        if strategy not in STRATEGIES:
            raise ValueError(f"chunker strategy {strategy!r} is not one of {', '.join(STRATEGIES)}")
        if missing_scopes not in MISSING_SCOPES:
            raise ValueError(f"chunker missing_scopes {missing_scopes!r} is not one of {', '.join(MISSING_SCOPES)}")
        self.model_name = model_name
        self.requested_max_tokens = max_tokens
        self.overlap_ratio = overlap_ratio
        self.max_bytes = max_bytes
        self.strategy = strategy
        # What a document that states no access scopes gets: `public`, or refused.
        self.missing_scopes = missing_scopes
        self.counter = TokenCounter(model_name)
        self.max_tokens = 0
        self._packer: SectionPacker | None = None
        self._windows: FixedWindows | None = None

    @property
    def chunker_id(self) -> str:
        return "structure-v2" if self.strategy == "structure" else f"fixed-{self.max_tokens}"

    def warm_up(self) -> None:
        self.counter.warm_up()
        window = self.counter.max_tokens
        # The budget follows the model: never more than its window, so nothing is silently truncated.
        # The fixed baseline asks for the common 512 and gets the same cap (see fixed.py).
        requested = self.requested_max_tokens or (COMMON_DEFAULT_TOKENS if self.strategy == "fixed" else window)
        self.max_tokens = min(requested, window)
        self._packer = SectionPacker(self.counter, self.max_tokens, self.overlap_ratio)
        self._windows = FixedWindows(self.counter, self.max_tokens, self.overlap_ratio)

    def run(self, content: bytes, meta: DocumentMeta) -> tuple[DocumentMeta, list[Chunk]]:
        resolved, chunks, _ = self.chunk(content, meta)
        return resolved, chunks

    def chunk(self, content: bytes, meta: DocumentMeta) -> tuple[DocumentMeta, list[Chunk], list[Statement]]:
        """The chunks, and what the document states about its validity and what it replaces (front matter,
        else read from its text: services/chunker/supersession.py), for the ingest result to report."""
        name = meta.document_id or meta.source_uri or "document"
        if not meta.tenant_id:
            raise InvalidArgument("document.meta.tenant_id", f"is required ({name})")
        if len(content) > self.max_bytes:
            raise InvalidArgument(
                "document.content",
                f"{name} is {len(content)} bytes, over the {self.max_bytes}-byte limit (RAGMESH_CHUNKER_MAX_BYTES)",
            )
        if not content.strip():
            raise InvalidArgument("document.content", f"{name} is empty")
        content_type = content_type_for(meta.content_type, meta.source_uri)
        check_archive(content, name, self.max_bytes)
        parsed = parse_document(content, content_type, name)
        if len(parsed.text) > self.max_bytes:  # a format whose text outgrows its bytes (zip-based ones)
            raise ResourceExhausted(
                f"document.content: {name} has {len(parsed.text)} characters of text, over "
                f"the {self.max_bytes}-byte document limit (RAGMESH_CHUNKER_MAX_BYTES)"
            )
        resolved, statements = self._resolve_meta(meta, parsed, content, content_type)
        if self._packer is None or self._windows is None:
            raise RuntimeError("the chunker is not warmed up (warm_up() first)")
        if self.strategy == "fixed":
            return resolved, self._windows.chunks(parsed.text, resolved, parsed.body_start), statements
        return resolved, build_chunks(parsed.text, resolved, parsed.sections, self._packer), statements

    def _resolve_meta(
        self, meta: DocumentMeta, parsed: ParsedDocument, content: bytes, content_type: str
    ) -> tuple[DocumentMeta, list[Statement]]:
        """Caller-supplied metadata wins; front matter (Markdown and plain text) fills the gaps; then
        what the document says of itself at its head (an effective date; what it replaces: a date or a
        replacement stated further in, "new rate limits take effect ...", is about something else); then defaults.
        Every stated governance value is checked. Returns the statements the ingest result reports."""
        name = meta.document_id or meta.source_uri or "document"
        stated = {key: _front_matter_value(parsed.fields, key, name) for key in parsed.fields}
        statements = [
            Statement("supersedes", d, "front matter", SOURCE_FRONT_MATTER) for d in stated.get("supersedes", [])
        ]
        if "supersedes" in stated:  # stated (even as none): the text is not read for it
            statements += [s for s in infer(parsed.head) if s.field == "effective_from"]
        else:
            statements += infer(parsed.head)
        inferred_from = next((s.value for s in statements if s.field == "effective_from"), "")
        if meta.effective_from or "effective_from" in stated:
            statements = [s for s in statements if s.field != "effective_from"]
            inferred_from = ""
        scopes = (
            scope_list(list(meta.access_scopes), "document.meta.access_scopes", name)
            if meta.access_scopes
            else stated.get("access_scopes")
        )
        if not scopes:
            refuse_access_like_keys(parsed.access_like, name)
        document_id = meta.document_id or stated.get("doc_id") or str(PurePosixPath(meta.source_uri or "document"))
        effective_from = (
            date_value(meta.effective_from, "document.meta.effective_from", name)
            if meta.effective_from
            else stated.get("effective_from", inferred_from or DEFAULT_EFFECTIVE_FROM)
        )
        effective_to = (
            date_value(meta.effective_to, "document.meta.effective_to", name)
            if meta.effective_to
            else stated.get("effective_to", "")
        )
        check_interval(effective_from, effective_to, name)
        id_field = (
            "document.meta.document_id"
            if meta.document_id
            else ("front_matter.doc_id" if stated.get("doc_id") else "document.meta.source_uri")
        )
        check_document_name(document_id, id_field, name, MAX_DOCUMENT_ID)
        version = meta.version or stated.get("version") or "1"
        version_field = "document.meta.version" if meta.version else "front_matter.version"
        check_document_name(version, version_field, name, MAX_VERSION)
        resolved = dataclasses.replace(
            meta,
            document_id=document_id,
            version=version,
            access_scopes=scopes or default_scopes(self.missing_scopes, document_id),
            effective_from=effective_from,
            effective_to=effective_to,
            content_type=content_type,
            title=meta.title or stated.get("title") or parsed.title or PurePosixPath(document_id).stem,
            source_sha256=hashlib.sha256(content).hexdigest(),
        )
        return resolved, statements


def _front_matter_value(fields: dict, key: str, name: str):
    field = f"front_matter.{key}"
    if key == "supersedes":  # document ids, or `none` (the text's "replaces" statements are then ignored)
        value = fields[key]
        ids = value if isinstance(value, list) else [value]
        return [text_value(v, field, name) for v in ids if not (isinstance(v, str) and v.strip().lower() == "none")]
    if key == "access_scopes":
        return scope_list(fields[key], field, name)
    if key in ("effective_from", "effective_to"):
        return date_value(fields[key], field, name)
    return text_value(fields[key], field, name)
