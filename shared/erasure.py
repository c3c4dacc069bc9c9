"""Erasure evidence shared by every store: probes taken from text before it is deleted, raw-file scans,
and one check record per store (what was removed there, and what its verification found).

A probe is an exact substring of the erased text (a run of distinctive words) or an erased chunk id; a
store passes when none is found, neither through the store's own query path nor in its files' bytes.
Probes are handed between stages in memory only: a report carries their count and short hashes, never
the text.
"""

import dataclasses
import hashlib
import mmap
import os
import re
from collections.abc import Callable

from ahocorasick_rs import MATCHKIND_STANDARD, BytesAhoCorasick

# A run of this many words is long enough to be specific to one document, short enough to survive
# small edits between versions.
PROBE_WORDS = 5
PROBES_PER_TEXT = 2
MAX_PROBES = 64
MAX_PROBES_PER_DOCUMENT = 16
_WORD = re.compile(r"\w+", re.UNICODE)
# Separators a probe may span: a short run of spaces and ASCII punctuation (" ", ", ", " | ", " | +"), so a
# table row, a key: value list or a phone number gives probes as well as prose does. The probe is the exact
# substring, byte for byte what a store holds; the index's phrase queries read only its words. No line
# breaks, tabs, quotes or backslashes: JSON (export files) writes those escaped.
_GAP = re.compile(r"[ !#-/:-@\[\]^`{|}~]{1,4}")


@dataclasses.dataclass
class StoreCheck:
    """One store's part of an erasure: its counts before and after, and its verification."""

    store: str
    location: str
    method: str
    removed: int = 0
    before: int = 0
    after: int = 0
    probes_checked: int = 0
    probes_found: int = 0
    ids_checked: int = 0
    ids_found: int = 0
    note: str = ""
    # The store could not be reached or searched: nothing is known about it, so the erasure is unverified.
    unchecked: bool = False

    @property
    def clean(self) -> bool:
        return not self.unchecked and self.after == 0 and self.probes_found == 0 and self.ids_found == 0

    def add_scan(self, scan: "ScanResult") -> None:
        self.probes_checked = max(self.probes_checked, scan.probes_checked)
        self.ids_checked = max(self.ids_checked, scan.ids_checked)
        self.probes_found += scan.probes_found
        self.ids_found += scan.ids_found


@dataclasses.dataclass
class ScanResult:
    probes_checked: int = 0
    probes_found: int = 0
    ids_checked: int = 0
    ids_found: int = 0


def _word_score(word: str) -> float:
    """Rarer-looking words score higher: long ones, ones with digits or inner capitals (codes, names)."""
    score = min(len(word), 12)
    if any(ch.isdigit() for ch in word):
        score += 6
    if word[:1].isupper():
        score += 3
    return score


def distinctive_runs(text: str, words: int = PROBE_WORDS, limit: int = PROBES_PER_TEXT) -> list[str]:
    """Up to `limit` non-overlapping runs of `words` words on one line, separated by short gaps of spaces
    and punctuation, exactly as they appear in `text`, the most distinctive-looking first."""
    tokens = list(_WORD.finditer(text))
    scored = []
    for i in range(len(tokens) - words + 1):
        window = tokens[i : i + words]
        gaps = [text[a.end() : b.start()] for a, b in zip(window, window[1:], strict=False)]
        if not all(_GAP.fullmatch(gap) for gap in gaps):
            continue
        score = sum(_word_score(t.group()) for t in window)
        scored.append((score, i))
    chosen: list[int] = []
    for _, i in sorted(scored, key=lambda s: (-s[0], s[1])):
        if all(abs(i - j) >= words for j in chosen):
            chosen.append(i)
        if len(chosen) >= limit:
            break
    return [text[tokens[i].start() : tokens[i + words - 1].end()] for i in sorted(chosen)]


def pick_probes(texts_by_document: dict[str, str], exclusive: Callable[[str], bool]) -> list[str]:
    """Distinctive runs of each document's text, taken round-robin so every document is represented (a
    single document gets more than each of a tenant's many), keeping those `exclusive` confirms no other
    stored document contains: such a run would be "found" after a correct erasure. Runs are taken, and
    `exclusive` (a query per run) asked, only until MAX_PROBES are kept: a tenant erasure of 10^5 documents
    reads the text of the first hundred or so, not all of it."""
    per_text = max(PROBES_PER_TEXT, min(MAX_PROBES_PER_DOCUMENT, MAX_PROBES // max(len(texts_by_document), 1)))
    texts = list(texts_by_document.values())
    runs: dict[int, list[str]] = {}  # a document's runs, found when the round-robin first reaches it
    asked: set[str] = set()
    kept: list[str] = []
    for rank in range(per_text):
        for i, text in enumerate(texts):
            if i not in runs:
                runs[i] = distinctive_runs(text, limit=per_text)
            mine = runs[i]
            if rank >= len(mine) or mine[rank] in asked:
                continue
            asked.add(mine[rank])
            if exclusive(mine[rank]):
                kept.append(mine[rank])
                if len(kept) == MAX_PROBES:
                    return kept
    return kept


def probe_digest(probe: str) -> str:
    """What a report shows of a probe: a short hash, so the report itself holds no erased text."""
    return hashlib.sha256(probe.encode()).hexdigest()[:16]


def ids_digest(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


def sqlite_files(path: str) -> list[str]:
    """The database file and the companions SQLite keeps next to it (write-ahead log, shared memory,
    rollback journal), those that exist."""
    return [p for p in (path, path + "-wal", path + "-shm", path + "-journal") if os.path.exists(p)]


def _matcher(probes: list[str], ids: list[str]) -> BytesAhoCorasick | None:
    """One automaton for every probe and id (UTF-8; probes first, as _count reads the indexes), so a
    haystack is read once whatever their number: an erased tenant's 10^6 chunk ids are looked for at once,
    not one scan of the file each."""
    needles = [p.encode() for p in probes] + [i.encode() for i in ids]
    return BytesAhoCorasick(needles, matchkind=MATCHKIND_STANDARD) if needles else None


def _found(matcher: BytesAhoCorasick | None, haystack) -> set[int]:
    """Which needles occur in the haystack (bytes, or a mmap). Overlapping matches count, so one needle never
    hides another that shares its bytes."""
    if matcher is None or not len(haystack):
        return set()
    return {index for index, _, _ in matcher.find_matches_as_indexes(haystack, overlapping=True)}


def _count(found: set[int], probes: list[str], ids: list[str]) -> ScanResult:
    return ScanResult(
        probes_checked=len(probes),
        probes_found=sum(1 for i in found if i < len(probes)),
        ids_checked=len(ids),
        ids_found=sum(1 for i in found if i >= len(probes)),
    )


def scan_files(paths: list[str], probes: list[str], ids: list[str]) -> ScanResult:
    """Counts the probes and ids (UTF-8) found anywhere in the raw bytes of the files."""
    matcher = _matcher(probes, ids)
    found: set[int] = set()
    for path in paths:
        if not os.path.exists(path) or os.path.getsize(path) == 0:
            continue
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
            found |= _found(matcher, data)
    return _count(found, probes, ids)


def scan_text(texts: list[str], probes: list[str], ids: list[str]) -> ScanResult:
    """The same count over text a store returned through its own query path."""
    matcher = _matcher(probes, ids)
    return _count(_found(matcher, "\n".join(texts).encode()), probes, ids)
