"""Client-side ingestion: files -> bounded Ingest requests -> one result line per document."""

import sys

from ragmesh.client import RagmeshClient
from services.cli.documents import collect_files, to_source_document
from shared.stubs import common_pb2

MAX_BATCH_BYTES = 32 * 1024 * 1024
# A file that cannot fit in one Ingest request under the gateway's 64 MiB gRPC message limit.
MAX_FILE_BYTES = 60 * 1024 * 1024


def batches(files, max_docs: int):
    """Bounded requests (count and bytes); a bad document still fails alone inside its batch."""
    batch: list[common_pb2.SourceDocument] = []
    size = 0
    for path, uri in files:
        doc = to_source_document(path, uri)
        if batch and (len(batch) >= max_docs or size + len(doc.content) > MAX_BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append(doc)
        size += len(doc.content)
    if batch:
        yield batch


def ingest(
    client: RagmeshClient, paths: list[str], tenant: str, timeout: float, batch: int = 8, out=sys.stdout
) -> tuple[int, int]:
    from tqdm import tqdm

    files = collect_files(paths)
    ok = failed = 0
    # Too large to send: fails alone here, so one such file never stops the folder's other files.
    too_large = [(path, uri) for path, uri in files if path.stat().st_size > MAX_FILE_BYTES]
    with tqdm(total=len(files), unit="doc", file=sys.stderr, disable=not sys.stderr.isatty()) as bar:
        for path, uri in too_large:
            failed += 1
            bar.write(
                f"FAILED {uri}: RESOURCE_EXHAUSTED: {path.stat().st_size} bytes, over the "
                f"{MAX_FILE_BYTES}-byte limit of one Ingest request",
                file=out,
            )
            bar.update(1)
        sendable = [f for f in files if f not in too_large]
        # The gateway refuses a second file giving the same document version within one request; across the
        # run's requests the later file has already replaced the earlier one's text, which is said, not hidden.
        given: dict[tuple[str, str], str] = {}
        for docs in batches(sendable, batch):
            for result in client.ingest(docs, tenant=tenant, timeout=timeout):
                earlier = given.setdefault((result.document_id, result.version), result.source_uri) if result.ok else ""
                if result.ok and earlier != result.source_uri:
                    failed += 1
                    bar.write(
                        f"FAILED {result.source_uri}: {result.document_id}@{result.version} was also given by "
                        f"{earlier} earlier in this run, and this file's text replaced it: give each file its "
                        "own doc_id or version",
                        file=out,
                    )
                    bar.update(1)
                    continue
                if result.ok:
                    ok += 1
                    line = (
                        f"ok     {result.source_uri} -> {result.document_id}@{result.version}: "
                        f"{result.chunks_written} written, {result.chunks_unchanged} unchanged, "
                        f"{result.chunks_removed} removed"
                    )
                    # Inferred governance is shown, for the operator to confirm or override in front matter.
                    for stated in result.statements:
                        line += (
                            f"\n       {stated.field} {stated.value!r} ({stated.source}: {stated.evidence!r}): "
                            f"{stated.outcome}"
                        )
                else:
                    failed += 1
                    line = f"FAILED {result.source_uri}: {result.error_code}: {result.error}"
                bar.write(line, file=out)
                bar.update(1)
    return ok, failed
